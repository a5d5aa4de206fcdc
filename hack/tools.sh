#!/usr/bin/env bash
# Builds the test binaries (etcd, the Kubernetes control plane, kube-proxy, kwok,
# MetalLB and its previous release, frr-k8s, Helm, Prometheus and promtool,
# OpenShift's SCC admission served as a webhook),
# controller-gen and prometheus-operator's CRD files from the Go modules pinned
# under hack/tools, into a cache outside the clone keyed by version. Nothing is
# downloaded but Go modules.
#
#   hack/tools.sh build [group...]   build what is missing (groups: etcd kube kube-proxy kwok metallb metallb-previous frr-k8s helm controller-tools prometheus prometheus-operator scc-admission)
#   hack/tools.sh path               print the colon-separated folders holding the binaries
#
# Several runs may start at once (two clones, or make -j): each group is built under
# an exclusive lock and moved into place only when complete.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/bmlb-cno/tools
all_groups=(etcd kube kube-proxy kwok metallb metallb-previous frr-k8s helm controller-tools prometheus prometheus-operator scc-admission)

# The module whose version names a group's folder, and the packages it builds.
module_of() {
  case $1 in
    etcd) echo go.etcd.io/etcd/server/v3 ;;
    kube | kube-proxy) echo k8s.io/kubernetes ;;
    kwok) echo sigs.k8s.io/kwok ;;
    metallb | metallb-previous) echo go.universe.tf/metallb ;;
    frr-k8s) echo github.com/metallb/frr-k8s ;;
    helm) echo helm.sh/helm/v3 ;;
    controller-tools) echo sigs.k8s.io/controller-tools ;;
    prometheus) echo github.com/prometheus/prometheus ;;
    prometheus-operator) echo github.com/prometheus-operator/prometheus-operator ;;
    scc-admission) echo github.com/openshift/apiserver-library-go ;;
    *) echo "unknown tool group: $1 (want one of: ${all_groups[*]})" >&2; return 1 ;;
  esac
}

version_of() {
  local module
  module=$(module_of "$1")
  awk -v m="$module" '($1 == m || ($1 == "require" && $2 == m)) { print ($1 == m ? $2 : $3); exit }' \
    "$here/tools/$1/go.mod"
}

# dir_of GROUP: the group's folder, named by its module's version; a group
# with a program of its own (a main.go: scc-admission) by its source too.
dir_of() {
  local source=
  if [ -f "$here/tools/$1/main.go" ]; then
    source=-$(cat "$here/tools/$1"/*.go "$here/tools/$1/go.sum" | sha256sum | cut -c1-12)
  fi
  echo "$cache/$1-$(version_of "$1")$source"
}

# kube_ldflags VERSION: Kubernetes' version stamps; without them clients see the
# server as v0.0.0.
kube_ldflags() {
  local version=$1 minor ld="-s -w" pkg
  minor=${version#v1.}; minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  echo "$ld"
}

# build_group GROUP OUTDIR: builds every binary of GROUP into OUTDIR.
build_group() {
  local group=$1 out=$2 version
  version=$(version_of "$group")
  local flags=(-trimpath)
  cd "$here/tools/$group"
  case $group in
    etcd)
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3 ;;
    kube)
      go build "${flags[@]}" -ldflags "$(kube_ldflags "$version")" -o "$out/" \
        k8s.io/kubernetes/cmd/kube-apiserver \
        k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler \
        k8s.io/kubernetes/cmd/kubectl ;;
    kube-proxy)
      go build "${flags[@]}" -ldflags "$(kube_ldflags "$version")" -o "$out/" k8s.io/kubernetes/cmd/kube-proxy ;;
    kwok)
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/kwok" sigs.k8s.io/kwok/cmd/kwok
      # kwok acts only through stages; keep the ones of the pinned release beside it:
      # nodes become Ready and keep their Lease, pods become Ready and go when deleted.
      local src
      src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
      for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
        echo "---"
        cat "$src/$f.yaml"
      done >"$out/kwok-stages.yaml" ;;
    metallb)
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/metallb-controller" go.universe.tf/metallb/controller
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/metallb-speaker" go.universe.tf/metallb/speaker ;;
    metallb-previous) # named by release: testenv.Binary finds binaries by name in every group's folder
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/metallb-controller-$version" go.universe.tf/metallb/controller
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/metallb-speaker-$version" go.universe.tf/metallb/speaker ;;
    frr-k8s) # named as in frr-k8s's image; the reloader is a script the image copies too
      local m=github.com/metallb/frr-k8s
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/frr-k8s" $m/cmd/frr-k8s-controller
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/frr-k8s-statuscleaner" $m/cmd/statuscleaner
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/frr-status" $m/cmd/status
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/frr-metrics" $m/cmd/metrics
      install -m 755 "$(go list -m -f '{{.Dir}}' $m)/cmd/reloader/frr-reloader.sh" "$out/frr-reloader.sh" ;;
    helm)
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/helm" helm.sh/helm/v3/cmd/helm ;;
    controller-tools)
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen ;;
    prometheus) # module v0.316.0 is Prometheus 3.16.0; of the optional service discoveries keep Kubernetes'
      local release=${version#v0.}
      release=${release:0:1}.${release:1}
      go build "${flags[@]}" -tags remove_all_sd,enable_kubernetes_sd \
        -ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" -o "$out/" \
        github.com/prometheus/prometheus/cmd/prometheus \
        github.com/prometheus/prometheus/cmd/promtool ;;
    scc-admission) # a program of this folder: OpenShift's admission plugin as a webhook
      go build "${flags[@]}" -ldflags "-s -w" -o "$out/scc-admission" . ;;
    prometheus-operator) # nothing built: the CRDs of the monitoring objects the operands may own
      local m=github.com/prometheus-operator/prometheus-operator src
      go mod download $m
      src=$(go list -m -f '{{.Dir}}' $m)/example/prometheus-operator-crd
      for kind in servicemonitors podmonitors prometheusrules; do
        install -m 644 "$src/monitoring.coreos.com_$kind.yaml" "$out/"
      done ;;
  esac
}

# building is the temporary folder of the group being built, removed if the run dies.
building=
trap '[ -z "$building" ] || rm -rf "$building"' EXIT

ensure() {
  local group=$1 dir lock start
  dir=$(dir_of "$group")
  [ -d "$dir" ] && return 0
  mkdir -p "$cache"
  exec {lock}>"$dir.lock"
  flock "$lock"
  if [ ! -d "$dir" ]; then # another run may have built it while we waited
    building=$(mktemp -d "$dir.tmp.XXXXXX")
    chmod 755 "$building"
    start=$(date +%s)
    echo "tools: building $group $(version_of "$group") into $dir" >&2
    if ! (build_group "$group" "$building"); then
      echo "tools: building $group failed" >&2
      return 1
    fi
    mv "$building" "$dir"
    building=
    echo "tools: built $group in $(( $(date +%s) - start ))s" >&2
  fi
  exec {lock}>&-
}

# Tests and make use the same binaries as the rest of the toolchain.
export CGO_ENABLED=0 GOFLAGS=-mod=mod

case ${1:-} in
  build)
    shift
    groups=("$@")
    [ ${#groups[@]} -gt 0 ] || groups=("${all_groups[@]}")
    for g in "${groups[@]}"; do ensure "$g"; done ;;
  path)
    p=
    for g in "${all_groups[@]}"; do p+=${p:+:}$(dir_of "$g"); done
    echo "$p" ;;
  *)
    echo "usage: $0 build [${all_groups[*]}] | path" >&2
    exit 2 ;;
esac
