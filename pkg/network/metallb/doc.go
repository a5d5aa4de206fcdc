// Package metallb is the MetalLB module of the operator: it notices that the
// platform allows MetalLB and that the user configured it, renders MetalLB's
// manifests from bindata/metallb, applies them, carries out upgrades in order
// and reports MetalLB's state.
//
// A reconcile is observe (observe*.go: every read, into a plan.Snapshot),
// plan (package plan: every decision, with no client and no clock), act
// (act.go: every write of the plan) and the report (act_report.go: the
// status, metrics and Events the plan's Report says). What this package adds
// to the operator is Module: its flags, its cache, its watches.
package metallb
