// Package noderunner plays the kubelet of test nodes for chosen Pods: it runs
// their containers as real processes (the locally built MetalLB binaries), each
// in its pod's network namespace on a test bridge and in a mount namespace of
// its own whose root holds the pod's volumes at their mount paths, and it
// reports the Pods' status as a kubelet does. kwok keeps the Nodes and the
// other Pods.
//
// Containers find the API server as in a cluster, not through a kubeconfig:
// the pod's service-account token and CA are projected into
// /var/run/secrets/kubernetes.io/serviceaccount, and KUBERNETES_SERVICE_HOST
// and _PORT give the API server's own address (no kube-proxy makes the
// kubernetes Service's address reachable here).
//
// What a kubelet does and this runner does too: init containers, run to
// completion in order; a cgroup for each container, whose processes go when
// its main process ends; fieldRef, Secret and ConfigMap
// values in the environment; Secret, ConfigMap, projected (service-account
// token, kube-root-ca.crt, namespace) and emptyDir volumes, Secrets and
// ConfigMaps kept current; the pod's user, groups and read-only root; readiness
// probes (HTTP) with their delays, periods and thresholds; restarts with
// back-off; on deletion SIGTERM, the grace period, SIGKILL, then the Pod's
// removal. What it does not: liveness probes, resource limits, capabilities
// (containers run with root's), PID namespaces (a pod's containers see one
// another's processes, as with shareProcessNamespace), image pulls (an image
// names a local binary, or an Image of the node's files). Tests may also
// play what befalls a node: its kubelet gone (StopNode), a pod's containers
// crashing (SignalPod), or starved of CPU (Renice).
//
// The test network (network.go) is dual-stack on the nodes' side, and a
// NeighborProber asks from the client who answers for an address, by ARP or
// by NDP.
package noderunner
