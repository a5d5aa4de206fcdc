// Package metallb is the MetalLB module of the operator: it notices that the
// platform allows MetalLB and that the user configured it, renders MetalLB's
// manifests from bindata/metallb, applies them, carries out upgrades in order
// and reports MetalLB's state.
//
// A reconcile is three steps, each in its own file: observe (observe.go) reads
// what decisions look at into a Snapshot, plan (plan.go) works out from it,
// with no client and no clock, everything the reconcile does, and act (act.go)
// does it. Every decision is a row of plan_test.go's table.
package metallb
