// Package nodeaddress is the MetalLB module's node-address mode: LoadBalancer
// Services get, in status.loadBalancer.ingress, the addresses of the nodes
// that can take their traffic, and the cluster's kube-proxy (or OVN-Kubernetes,
// or Cilium) carries it, as it does for any load balancer address of a
// Service. No address pool and no workload of MetalLB's is involved.
//
// Each Service is reconciled on its own: observe reads the Service, the
// eligible nodes and the Services that share one of its ports from the cache;
// package decide, with no client, works out its addresses and what it lost to
// older Services; act applies the status with server-side apply under
// FieldManager, and records a Warning Event for each loss.
//
// The mode runs only while its scope enables it (run.go): its cache of the
// cluster's Services and EndpointSlices, and the controller over it, start
// and stop with it. Turned off, or off when the operator starts, it sweeps
// what it wrote from every Service, reading their metadata a page at a time.
package nodeaddress
