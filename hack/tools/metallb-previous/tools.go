//go:build tools

// Package tools pins the MetalLB release before the operand's, for upgrade tests: its controller and speaker.
package tools

import (
	_ "go.universe.tf/metallb/controller"
	_ "go.universe.tf/metallb/speaker"
)
