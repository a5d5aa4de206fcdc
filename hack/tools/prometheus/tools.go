//go:build tools

// Package tools pins Prometheus: promtool (checks and unit-tests rules) and
// the prometheus server.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
