//go:build tools

// Package tools pins the MetalLB operand: its controller and speaker.
package tools

import (
	_ "go.universe.tf/metallb/controller"
	_ "go.universe.tf/metallb/speaker"
)
