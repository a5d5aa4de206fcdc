package testenv

import (
	"context"
	"testing"
)

// How long a test waits for its control plane decides how many tests can afford
// one of their own.
func BenchmarkStartStop(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"apiserver", Options{}},
		{"full-3-nodes", Options{ControllerManager: true, Scheduler: true, Nodes: Nodes(3)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				e, err := Start(context.Background(), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				e.Stop()
			}
		})
	}
}
