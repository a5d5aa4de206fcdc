//go:build tools

// Package tools pins frr-k8s, MetalLB's FRR backend, at the release MetalLB's
// own go.mod names: the daemon's controller and its status cleaner, status
// and metrics programs.
package tools

import (
	_ "github.com/metallb/frr-k8s/cmd/frr-k8s-controller"
	_ "github.com/metallb/frr-k8s/cmd/metrics"
	_ "github.com/metallb/frr-k8s/cmd/status"
	_ "github.com/metallb/frr-k8s/cmd/statuscleaner"
)
