// Package binarybench is what the benchmark programs of the built operator
// (hack/activation-bench, hack/memory-bench) share: a pkg/testenv control
// plane, the operator binary started on it with its default flags and the
// environment its install manifests give it, and the ways a user sees the
// operator from outside: its /readyz, its leader Lease, the objects it writes
// (followed with watches), its log and its process.
//
// Whatever it starts is stopped on every exit path: Bench.Stop stops the
// operator (SIGTERM, then SIGKILL) and then the control plane; Main turns
// Ctrl-C and SIGTERM into a cancelled context so that the deferred stops run;
// and every child gets a parent-death signal for when the program is killed
// outright.
package binarybench
