// Package operator runs the cluster network operator: a controller-runtime manager
// with leader election, health endpoints, metrics and structured logs.
package operator
