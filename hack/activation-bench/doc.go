// Command activation-bench measures activation as users get it: the built
// operator binary, started with its default flags (client-go's rate limits
// included) against a real kube-apiserver from pkg/testenv.
//
// Each try creates an IPAddressPool in metallb-system and times, with
// watches, until both the controller Deployment and the speaker DaemonSet
// exist (activation); then deletes the pool and times until both are gone
// (deactivation). It prints p50, p90 and max of each. Last, with the operator
// idle, it counts the writes to the operator's leader Lease (its renewals)
// for -lease-window.
//
// It exits 1 when a goal is missed: activation p50 over 100 ms, or a line of
// client-go's client-side throttling in the operator's log (printed); 2 when
// it could not measure. The default flags bind :8081 (health) and the metrics
// port, so it runs alone.
//
//	make build && go run ./hack/activation-bench -binary bin/cluster-network-operator
package main
