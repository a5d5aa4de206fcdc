// Command demo tells the operator's story on a local control plane that it
// starts itself (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok with three nodes): MetalLB of the previous release, installed by
// hand from upstream's manifest, its real controller and speakers running in
// network namespaces as in the end-to-end stories (test/e2e/cluster), answers
// by ARP for a LoadBalancer Service's address; the operator starts, takes its
// Lease, and leaves that installation alone until the namespace is annotated;
// then it takes it over and upgrades it, one speaker at a time, while a client
// keeps asking for the address; last, a new release of the operator replaces
// every MetalLB pod again. It ends by itself, or on Ctrl-C, and stops
// everything. It needs root.
package main
