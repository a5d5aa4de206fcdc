package testenv

import (
	"context"
	"testing"
)

// How long a test waits for its control plane decides how many tests can afford
// one of their own. Goal: a start and a stop in under 10 s with the whole
// control plane, so that a package of a dozen tests runs in about two minutes.
func BenchmarkStartStop(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
		goal float64 // seconds
	}{
		{"apiserver", Options{}, 8},
		{"full-3-nodes", Options{ControllerManager: true, Scheduler: true, Nodes: Nodes(3)}, 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				e, err := Start(context.Background(), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				e.Stop()
			}
			perRun := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(perRun, "s/start-stop")
			b.ReportMetric(bc.goal, "goal-s/start-stop")
			if perRun > bc.goal {
				b.Errorf("a start and a stop took %.1f s, over the goal of %.0f s", perRun, bc.goal)
			}
		})
	}
}
