// Package testenv starts a real Kubernetes control plane for tests and demos:
// etcd and kube-apiserver, run by controller-runtime's envtest on free ports
// with a fresh data folder and, on request, kube-controller-manager,
// kube-scheduler and kwok with fake Nodes. The binaries are built from pinned
// modules by `make tools` (hack/tools.sh); envtest downloads nothing.
package testenv
