// Package e2e drives the operator binary, as users run it, against a real
// control plane from pkg/testenv.
package e2e
