// Command rollout-bench measures an upgrade of MetalLB by the built operator
// on a large cluster, beside the same rollout by the DaemonSet controller
// alone: a pkg/testenv control plane with kube-controller-manager,
// kube-scheduler, -nodes kwok nodes and OpenShift's ClusterOperator API (the
// operator reports to ClusterOperator metallb, as on OpenShift).
//
// The operator, with its default flags and a user of its own whose requests
// the API server's audit log keeps, activates MetalLB (an IPAddressPool and a
// MetalLB object with speakerConfig.maxUnavailable -max-unavailable) and
// rolls the speakers out on every node. Then it is stopped and started again
// as the next release (MetalLB's images and the release version changed), as
// an upgrade of its Deployment does, and the program times, with watches,
// from that start to the last speaker of the new release available and to
// the MetalLB object reporting the new version. It records the operator's
// writes by kind from the audit log until it has been quiet for a while,
// its CPU time from its start to the version reported (/proc/<pid>/stat), and
// its peak RSS. Before the upgrade and after it, with the operator stopped,
// it restarts the speakers the way `kubectl rollout restart` does, which
// replaces every pod with the same maxUnavailable, and times the DaemonSet
// controller alone: one such rollout varies by a third from run to run, so
// the upgrade is compared with the mean of the two.
//
// It exits 1 when a goal is missed: more than 50 writes (its Lease's renewals
// aside), more than 5 CPU-seconds, the operator's upgrade over 1.1 times the
// DaemonSet controller's rollouts, the version reported more than 1 s after the
// last speaker was available, or more speakers unavailable at once than
// maxUnavailable allows; 2 when it could not measure. The default flags bind
// :8081 (health) and the metrics port, so it runs alone.
//
//	make build && go run ./hack/rollout-bench -binary bin/cluster-network-operator
package main
