// Command demo tells the operator's story on a local control plane that it
// starts itself (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok with three nodes): the operator takes its Lease; a pool and an
// advertisement make it deploy MetalLB, whose real controller and speakers
// run in network namespaces (test/e2e/noderunner); a LoadBalancer Service
// gets an address that a client reaches by ARP; then a new release of the
// operator replaces every MetalLB pod while the client keeps asking. It ends by
// itself, or on Ctrl-C, and stops everything. It needs root.
package main
