#!/usr/bin/env bash
# Copies MetalLB's own files, verbatim, from the pinned release (the version in
# hack/tools/metallb/go.mod, which is also the one the tests run):
#   - its nine CRDs into bindata/metallb, where the operator applies them from;
#   - its native manifest into the tests' testdata, which checks our templates against it;
#   - its Helm chart into the end-to-end tests' testdata: the Helm install they refuse to take over;
#   - its frr-k8s manifest into the tests' testdata, which checks our frr-k8s mode against it;
# from the frr-k8s release MetalLB's go.mod names (also hack/tools/frr-k8s/go.mod's):
#   - its four CRDs into bindata/metallb, each wrapped in the template condition
#     that renders it only with the frr-k8s BGP backend;
#   - its own all-in-one manifest into the tests' testdata;
# and from the previous release (hack/tools/metallb-previous/go.mod) its native
# manifest into the end-to-end tests' testdata: the hand install they take over.
#
#   hack/update-bindata.sh           copy
#   hack/update-bindata.sh --verify  fail, listing the files, when the copies differ
set -euo pipefail
cd "$(dirname "$0")/.."

module=go.universe.tf/metallb
frr_module=github.com/metallb/frr-k8s
required() { awk -v m="$1" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$2" | head -n1; }
version_in() { required "$module" "hack/tools/$1/go.mod"; }
source_of() { # the folder of module $3 (default MetalLB's) at version $2 in the module cache, for the tools group $1
  local dir m=${3:-$module}
  dir=$(cd "hack/tools/$1" && GOFLAGS=-mod=mod go mod download -json "$m@$2" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "cannot find $m@$2 in the module cache" >&2; return 1; }
  echo "$dir"
}
version=$(version_in metallb)
src=$(source_of metallb "$version")
previous=$(version_in metallb-previous)
previous_src=$(source_of metallb-previous "$previous")
previous_manifest=test/e2e/testdata/metallb-native-$previous.yaml
chart=test/e2e/testdata/metallb-chart-$version
frr_version=$(required "$frr_module" hack/tools/frr-k8s/go.mod)
if [ "$(required "$frr_module" "$src/go.mod")" != "$frr_version" ]; then
  echo "hack/tools/frr-k8s/go.mod pins $frr_module $frr_version; MetalLB $version's go.mod names $(required "$frr_module" "$src/go.mod")" >&2
  exit 1
fi
frr_src=$(source_of frr-k8s "$frr_version" "$frr_module")
upstream=pkg/network/metallb/manifests/testdata/upstream

out=.
if [ "${1:-}" = --verify ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/bindata/metallb" "$out/$upstream" "$out/test/e2e/testdata"

for crd in "$src"/config/crd/bases/metallb.io_*.yaml; do
  cp "$crd" "$out/bindata/metallb/010-crd-$(basename "$crd")"
done
for crd in "$frr_src"/config/crd/bases/frrk8s.metallb.io_*.yaml; do
  { echo '{{- if .FRRK8s.Deploy }}'; cat "$crd"; echo '{{- end }}'; } >"$out/bindata/metallb/012-crd-$(basename "$crd")"
done
cp "$src/config/manifests/metallb-native.yaml" "$src/config/manifests/metallb-frr-k8s.yaml" "$out/$upstream/"
cp "$frr_src/config/all-in-one/frr-k8s.yaml" "$out/$upstream/frr-k8s.yaml"
cp "$previous_src/config/manifests/metallb-native.yaml" "$out/$previous_manifest"
chmod 644 "$out"/bindata/metallb/01[02]-crd-* "$out"/$upstream/*.yaml "$out/$previous_manifest"
rm -rf "${out:?}/$chart"
cp -r "$src/charts/metallb" "$out/$chart"
chmod -R u+w,go-w "$out/$chart"

if [ "$out" != . ]; then
  status=0
  for f in "$out"/bindata/metallb/01[02]-crd-*.yaml "$out"/$upstream/*.yaml "$out/$previous_manifest"; do
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
  for f in bindata/metallb/01[02]-crd-*.yaml; do
    [ -e "$out/$f" ] || { echo "$f is not a CRD of $module@$version or $frr_module@$frr_version: remove it" >&2; status=1; }
  done
  exit $status
fi
echo "copied MetalLB $version's CRDs, manifests and Helm chart from $src, frr-k8s $frr_version's CRDs and manifest from $frr_src, and $previous's native manifest from $previous_src"
