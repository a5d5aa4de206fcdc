#!/usr/bin/env bash
# Copies MetalLB's own files, verbatim, from the pinned release (the version in
# hack/tools/metallb/go.mod, which is also the one the tests run):
#   - its nine CRDs into bindata/metallb, where the operator applies them from;
#   - its native manifest into the tests' testdata, which checks our templates against it.
#
#   hack/update-bindata.sh           copy
#   hack/update-bindata.sh --verify  fail, listing the files, when the copies differ
set -euo pipefail
cd "$(dirname "$0")/.."

module=go.universe.tf/metallb
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' hack/tools/metallb/go.mod | head -n1)
src=$(cd hack/tools/metallb && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "cannot find $module@$version in the module cache" >&2; exit 1; }

out=.
if [ "${1:-}" = --verify ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/bindata/metallb" "$out/pkg/network/metallb/testdata/upstream"

for crd in "$src"/config/crd/bases/metallb.io_*.yaml; do
  cp "$crd" "$out/bindata/metallb/010-crd-$(basename "$crd")"
done
cp "$src/config/manifests/metallb-native.yaml" "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml"
chmod 644 "$out"/bindata/metallb/010-crd-* "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml"

if [ "$out" != . ]; then
  status=0
  for f in "$out"/bindata/metallb/010-crd-*.yaml "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml"; do
    rel=${f#"$out"/}
    if ! cmp -s "$f" "$rel"; then
      echo "$rel differs from $module@$version: run 'make update-bindata'" >&2
      status=1
    fi
  done
  for f in bindata/metallb/010-crd-*.yaml; do
    [ -e "$out/$f" ] || { echo "$f is not a CRD of $module@$version: remove it" >&2; status=1; }
  done
  exit $status
fi
echo "copied MetalLB $version's CRDs and native manifest from $src"
