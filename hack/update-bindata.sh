#!/usr/bin/env bash
# Copies MetalLB's own files, verbatim, from the pinned release (the version in
# hack/tools/metallb/go.mod, which is also the one the tests run):
#   - its nine CRDs into bindata/metallb, where the operator applies them from;
#   - its native manifest into the tests' testdata, which checks our templates against it;
#   - its Helm chart into the end-to-end tests' testdata: the Helm install they refuse to take over;
# and from the previous release (hack/tools/metallb-previous/go.mod) its native
# manifest into the end-to-end tests' testdata: the hand install they take over.
#
#   hack/update-bindata.sh           copy
#   hack/update-bindata.sh --verify  fail, listing the files, when the copies differ
set -euo pipefail
cd "$(dirname "$0")/.."

module=go.universe.tf/metallb
version_in() { awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "hack/tools/$1/go.mod" | head -n1; }
source_of() { # the module's folder in the module cache, for the tools group $1 at version $2
  local dir
  dir=$(cd "hack/tools/$1" && GOFLAGS=-mod=mod go mod download -json "$module@$2" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "cannot find $module@$2 in the module cache" >&2; return 1; }
  echo "$dir"
}
version=$(version_in metallb)
src=$(source_of metallb "$version")
previous=$(version_in metallb-previous)
previous_src=$(source_of metallb-previous "$previous")
previous_manifest=test/e2e/testdata/metallb-native-$previous.yaml
chart=test/e2e/testdata/metallb-chart-$version

out=.
if [ "${1:-}" = --verify ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/bindata/metallb" "$out/pkg/network/metallb/testdata/upstream" "$out/test/e2e/testdata"

for crd in "$src"/config/crd/bases/metallb.io_*.yaml; do
  cp "$crd" "$out/bindata/metallb/010-crd-$(basename "$crd")"
done
cp "$src/config/manifests/metallb-native.yaml" "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml"
cp "$previous_src/config/manifests/metallb-native.yaml" "$out/$previous_manifest"
chmod 644 "$out"/bindata/metallb/010-crd-* "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml" "$out/$previous_manifest"
rm -rf "${out:?}/$chart"
cp -r "$src/charts/metallb" "$out/$chart"
chmod -R u+w,go-w "$out/$chart"

if [ "$out" != . ]; then
  status=0
  for f in "$out"/bindata/metallb/010-crd-*.yaml "$out/pkg/network/metallb/testdata/upstream/metallb-native.yaml" "$out/$previous_manifest"; do
    rel=${f#"$out"/}
    if ! cmp -s "$f" "$rel"; then
      echo "$rel differs from its release of $module: run 'make update-bindata'" >&2
      status=1
    fi
  done
  if ! diff -r "$out/$chart" "$chart" >/dev/null; then
    echo "$chart differs from its release of $module: run 'make update-bindata'" >&2
    status=1
  fi
  for f in bindata/metallb/010-crd-*.yaml; do
    [ -e "$out/$f" ] || { echo "$f is not a CRD of $module@$version: remove it" >&2; status=1; }
  done
  exit $status
fi
echo "copied MetalLB $version's CRDs, native manifest and Helm chart from $src, and $previous's native manifest from $previous_src"
