// Package plan is the MetalLB module's decisions, with no client and no
// clock: Make works out, from a Snapshot of the cluster, the options and the
// time, everything a reconcile does (what to apply, hold back, adopt and
// prune, the rollout tracking, the statuses and the Events), and the Plan's
// Report what it says once act has written. Every decision is a row of
// TestPlan's table.
package plan
