// Package noderunner plays the kubelet of test nodes for chosen Pods: it runs
// their containers as real processes (the locally built MetalLB binaries), each
// in its pod's network namespace on a test bridge and in a mount namespace of
// its own whose root holds its image's files and the pod's volumes at their
// mount paths, and it reports the Pods' status as a kubelet does (phase,
// conditions, waiting reasons, restart counts, last states). kwok keeps the
// Nodes and the other Pods.
//
// Containers find the API server as in a cluster, not through a kubeconfig:
// the pod's service-account token and CA are projected into
// /var/run/secrets/kubernetes.io/serviceaccount, and KUBERNETES_SERVICE_HOST
// and _PORT give the API server's own address (no kube-proxy makes the
// kubernetes Service's address reachable here).
//
// It holds each container to what a kubelet with CRI-O, OpenShift's runtime,
// holds it to, so that a manifest a real node would refuse fails here first:
//   - images are pulled by their whole reference from a registry the caller
//     gives (Options.Pull); an unknown one is ErrImagePull, then
//     ImagePullBackOff;
//   - environment values and volume items of missing keys are refused with
//     the kubelet's words (CreateContainerConfigError; a FailedMount Event
//     and the pod left ContainerCreating), runAsNonRoot for a root user too;
//   - the pod's and the image's user and groups; the capability set (CRI-O's
//     default for root, then add and drop; every one when privileged), the
//     bounding set cut to it, none held by another user; no_new_privs when
//     privilege escalation is not allowed; /sys and /proc/sys read-only
//     unless privileged; a read-only root;
//   - init containers in order, to completion; startup, liveness and
//     readiness probes (HTTP, TCP, exec in the container) with their delays,
//     periods and thresholds, a failed liveness or startup probe killing the
//     container with its grace; restarts at once the first time, then with
//     the kubelet's back-off (10 s doubling to 5 min);
//   - a cgroup for each container, whose processes go when its main process
//     ends, with the memory limit of the container (OOMKilled);
//   - on deletion SIGTERM, the grace period, SIGKILL, then the Pod's removal.
//
// What it does not: CPU limits, seccomp and AppArmor, PID and user namespaces
// (a pod's containers see one another's processes, as with
// shareProcessNamespace), /dev (the node's), lifecycle hooks, restart
// policies other than Always. Tests may also play what befalls a node: its
// kubelet gone and back (StopNode, StartNode), a pod's containers crashing
// (SignalPod), or starved of CPU (Renice).
//
// The test network (network.go) is dual-stack on the nodes' side, and a
// NeighborProber asks from the client who answers for an address, by ARP or
// by NDP.
package noderunner
