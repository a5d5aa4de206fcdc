// Command memory-bench measures the memory of the built operator binary, with
// its default flags, on a large cluster: a pkg/testenv control plane with
// -nodes kwok nodes and -services Services of type LoadBalancer.
//
// Once the cluster is built it starts the operator, activates MetalLB (an
// IPAddressPool), waits until the controller Deployment and the speaker
// DaemonSet exist and the operator has settled (its
// controller_runtime_reconcile_total unchanged for -settle), then reads the
// operator's resident set (VmRSS, and VmHWM as the peak) from
// /proc/<pid>/status and its Go heap in use (go_memstats_heap_inuse_bytes)
// from its metrics endpoint, with what else the runtime holds: free heap not
// yet returned to the kernel, goroutine stacks. With -idle it measures again
// after that long (the runtime collects at least every 2 minutes, and returns
// freed memory gradually); with -heap-profile it starts the operator with
// --pprof-bind-address and saves its heap profile, for `go tool pprof`.
//
// The metrics are read as Prometheus would, with the bearer token of a
// ServiceAccount allowed to get /metrics; -metrics-url says where (https is
// read without verifying the operator's self-signed certificate).
//
// It exits 1 when an RSS it measured is over 50 MiB (issue 12's goal), or, at
// the default 2,000 nodes and 10,000 Services, over the upstream
// metallb-operator's 60.1 MiB or with a heap in use of 12.2 MiB or more (its
// figures, issue 28's bar); 2 when it could not measure. It prints what the
// operator allocated while settling, the garbage a settled operator makes.
//
//	make build && go run ./hack/memory-bench -binary bin/cluster-network-operator
package main
