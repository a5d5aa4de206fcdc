package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTrack(t *testing.T) {
	const every = 5 * time.Second
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	done := func(version string) []Rollout {
		return []Rollout{
			{Kind: "Deployment", Name: "controller", Version: version, Desired: 1, Updated: 1, Available: 1, Observed: true},
			{Kind: "DaemonSet", Name: "speaker", Version: version, Desired: 3, Updated: 3, Available: 3, Observed: true},
		}
	}
	midway := []Rollout{
		{Kind: "Deployment", Name: "controller", Version: "B", Desired: 1, Updated: 1, Available: 1, Observed: true},
		{Kind: "DaemonSet", Name: "speaker", Version: "B", Desired: 3, Updated: 1, Available: 2, Observed: true},
	}

	// A finished at-version rollout reports the version, with nothing in flight.
	tr := Track(Tracking{}, "A", done("A"), t0, every)
	if tr.Version != "A" || tr.InFlight() {
		t.Fatalf("done at A: %+v", tr)
	}
	// Workloads written for B but not yet rolled out: A stays reported.
	tr = Track(tr, "B", done("A"), t0, every)
	if tr.Version != "A" || tr.Target != "B" || !tr.Since.Time.Equal(t0) {
		t.Fatalf("B started: %+v", tr)
	}
	// Progress moves LastProgress; the same counts later do not.
	tr = Track(tr, "B", midway, t0.Add(time.Minute), every)
	if !tr.LastProgress.Time.Equal(t0.Add(time.Minute)) || !tr.Since.Time.Equal(t0) {
		t.Fatalf("progress: %+v", tr)
	}
	tr = Track(tr, "B", midway, t0.Add(5*time.Minute), every)
	if got := tr.Stalled(t0.Add(5 * time.Minute)); got != 4*time.Minute {
		t.Fatalf("stalled for %s, want 4m", got)
	}
	if tr.Version != "A" {
		t.Fatalf("version flipped midway: %+v", tr)
	}
	// All done at B: B is reported.
	tr = Track(tr, "B", done("B"), t0.Add(6*time.Minute), every)
	if tr != (Tracking{Version: "B"}) {
		t.Fatalf("done at B: %+v", tr)
	}
	// Nothing deployed: the version is the target's.
	if tr := Track(Tracking{Version: "A"}, "B", nil, t0, every); tr.Version != "B" {
		t.Fatalf("nothing deployed: %+v", tr)
	}
}

// Counts that change again within every of the last recorded progress are
// held back, and due once it has passed.
func TestTrackHoldsProgressBack(t *testing.T) {
	const every = 5 * time.Second
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	midway := []Rollout{
		{Kind: "Deployment", Name: "controller", Version: "B", Desired: 1, Updated: 1, Available: 1, Observed: true},
		{Kind: "DaemonSet", Name: "speaker", Version: "B", Desired: 3, Updated: 1, Available: 2, Observed: true},
	}
	tr := Track(Tracking{Version: "A"}, "B", midway, t0, every)
	further := []Rollout{midway[0], {Kind: "DaemonSet", Name: "speaker", Version: "B", Desired: 3, Updated: 2, Available: 2, Observed: true}}
	soon := t0.Add(time.Second)
	if held := Track(tr, "B", further, soon, every); held != tr {
		t.Fatalf("progress 1s after the last was recorded: %+v, want it held at %+v", held, tr)
	}
	if due := tr.ProgressDue(further, soon, every); due != every-time.Second {
		t.Fatalf("held progress due in %s, want %s", due, every-time.Second)
	}
	if due := tr.ProgressDue(midway, soon, every); due != 0 {
		t.Fatalf("progress already recorded is due in %s", due)
	}
	recorded := Track(tr, "B", further, t0.Add(every), every)
	if want := "controller: 1 of 1 replicas updated, speaker: 2 of 3 nodes updated, 1 unavailable"; recorded.Progress != want ||
		!recorded.LastProgress.Time.Equal(t0.Add(every)) {
		t.Fatalf("progress %s after the last: %+v, want %q recorded", every, recorded, want)
	}
}

func TestRolloutMessage(t *testing.T) {
	r := Rollout{Kind: "DaemonSet", Name: "speaker", Desired: 50, Updated: 12, Available: 49, Observed: true}
	if got, want := r.Message(), "speaker: 12 of 50 nodes updated, 1 unavailable"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if r.Done() {
		t.Error("a rollout at 12 of 50 is done")
	}
}

// A Deployment that surges has its new pod updated and its old one available:
// not done until the old one went (the real controller's readiness showed it).
func TestSurgingDeploymentIsNotDone(t *testing.T) {
	d := &unstructured.Unstructured{Object: map[string]any{
		"kind": "Deployment", "metadata": map[string]any{"name": "controller", "generation": int64(2)},
		"spec":   map[string]any{"replicas": int64(1)},
		"status": map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1), "availableReplicas": int64(1)},
	}}
	r := RolloutOf(d, "version")
	if r.Done() {
		t.Error("a Deployment whose old pod is the available one is done")
	}
	if got, want := r.Message(), "controller: 1 of 1 replicas updated, 1 old still running"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	_ = unstructured.SetNestedField(d.Object, int64(1), "status", "replicas")
	if !RolloutOf(d, "version").Done() {
		t.Error("a Deployment with its one new pod available is not done")
	}
}
