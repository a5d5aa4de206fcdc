package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTrack(t *testing.T) {
	const refresh = 5 * time.Minute
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
	tr := Track(Tracking{}, "A", done("A"), t0, refresh)
	if tr.Version != "A" || tr.InFlight() {
		t.Fatalf("done at A: %+v", tr)
	}
	// Workloads written for B but not yet rolled out: A stays reported.
	tr = Track(tr, "B", done("A"), t0, refresh)
	if tr.Version != "A" || tr.Target != "B" || !tr.Since.Time.Equal(t0) {
		t.Fatalf("B started: %+v", tr)
	}
	// Progress moves LastProgress; the same counts later do not.
	tr = Track(tr, "B", midway, t0.Add(time.Minute), refresh)
	if !tr.LastProgress.Time.Equal(t0.Add(time.Minute)) || !tr.Since.Time.Equal(t0) {
		t.Fatalf("progress: %+v", tr)
	}
	tr = Track(tr, "B", midway, t0.Add(5*time.Minute), refresh)
	if got := tr.Stalled(t0.Add(5 * time.Minute)); got != 4*time.Minute {
		t.Fatalf("stalled for %s, want 4m", got)
	}
	if tr.Version != "A" {
		t.Fatalf("version flipped midway: %+v", tr)
	}
	// All done at B: B is reported.
	tr = Track(tr, "B", done("B"), t0.Add(6*time.Minute), refresh)
	if tr != (Tracking{Version: "B"}) {
		t.Fatalf("done at B: %+v", tr)
	}
	// Nothing deployed: the version is the target's.
	if tr := Track(Tracking{Version: "A"}, "B", nil, t0, refresh); tr.Version != "B" {
		t.Fatalf("nothing deployed: %+v", tr)
	}
}

// speakers is a rollout of B midway: the controller done, updated speakers
// of 2,000 nodes, 200 unavailable.
func speakers(updated int64) []Rollout {
	return []Rollout{
		{Kind: "Deployment", Name: "controller", Version: "B", Desired: 1, Updated: 1, Available: 1, Observed: true},
		{Kind: "DaemonSet", Name: "speaker", Version: "B", Desired: 2000, Updated: updated, Available: 1800, Observed: true},
	}
}

// Progress is recorded at each tenth more of the pods done; a change
// within a tenth waits for refresh after the last record, and is due then.
func TestTrackRecordsSteps(t *testing.T) {
	const refresh = 5 * time.Minute
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	started := Track(Tracking{Version: "A"}, "B", speakers(150), t0, refresh)
	for _, tc := range []struct {
		name     string
		updated  int64
		after    time.Duration
		recorded bool
		due      time.Duration
	}{
		{"the same counts", 150, time.Second, false, 0},
		{"more updated within the step", 199, time.Second, false, refresh - time.Second},
		{"a tenth reached", 200, time.Second, true, 0},
		{"several tenths at once", 900, time.Second, true, 0},
		{"within the step, refresh later", 199, refresh, true, 0},
		{"fewer updated, a step back", 10, time.Second, false, refresh - time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(tc.after)
			got := Track(started, "B", speakers(tc.updated), now, refresh)
			if recorded := got != started; recorded != tc.recorded {
				t.Fatalf("recorded %t, want %t: %+v", recorded, tc.recorded, got)
			}
			if tc.recorded && (got.Progress != progressOf(speakers(tc.updated), "B") || !got.LastProgress.Time.Equal(now) ||
				got.Step != stepOf(speakers(tc.updated), "B") || !got.Since.Time.Equal(t0)) {
				t.Fatalf("recorded %+v", got)
			}
			if due := got.ProgressDue(speakers(tc.updated), now, refresh); due != tc.due {
				t.Fatalf("due in %s, want %s", due, tc.due)
			}
		})
	}
}

// A 2,000-node rollout one node at a time, the node being updated not
// available, records its progress 10 times however long it takes (its start
// and each tenth but the last), and its end once all are done.
func TestTrackWritesDoNotGrowWithTheRollout(t *testing.T) {
	const refresh = 5 * time.Minute
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	oneDown := func(updated int64) []Rollout {
		r := speakers(updated)
		r[1].Available = 1999
		return r
	}
	tr, records := Track(Tracking{Version: "A"}, "B", oneDown(0), t0, refresh), 1
	for updated := int64(1); updated <= 2000; updated++ {
		next := Track(tr, "B", oneDown(updated), t0.Add(time.Duration(updated)*100*time.Millisecond), refresh)
		if next != tr {
			records++
		}
		tr = next
	}
	if records != 10 {
		t.Errorf("%d progress records over 2,000 nodes, want 10", records)
	}
	done := speakers(2000)
	done[1].Available = 2000
	if end := Track(tr, "B", done, t0.Add(time.Hour), refresh); end != (Tracking{Version: "B"}) {
		t.Errorf("every pod done: %+v, want B reported", end)
	}
}

func TestStepOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rollouts []Rollout
		want     int
	}{
		{"nothing", nil, 0},
		{"absent", []Rollout{AbsentRollout("DaemonSet", "metallb-system", "speaker")}, 0},
		{"not observed: its counts are the old template's", []Rollout{{Version: "B", Desired: 10, Updated: 10, Available: 10}}, 0},
		{"not written for the target yet", []Rollout{{Version: "A", Desired: 10, Updated: 10, Available: 10, Observed: true}}, 0},
		{"a third done", []Rollout{{Version: "B", Desired: 3, Updated: 1, Available: 3, Observed: true}}, 3},
		{"updated, not available", []Rollout{{Version: "B", Desired: 3, Updated: 3, Available: 1, Observed: true}}, 3},
		{"both workloads", speakers(999), 4},
		{"surging", []Rollout{{Version: "B", Desired: 1, Updated: 2, Available: 2, Observed: true}}, 10},
		{"the new replica available, the old one still running", []Rollout{{Version: "B", Desired: 1, Updated: 1, Available: 2, Old: 1, Observed: true}}, 0},
		{"the old replica the available one", []Rollout{{Version: "B", Desired: 1, Updated: 1, Available: 1, Old: 1, Observed: true}}, 0},
		{"the old replica gone", []Rollout{{Version: "B", Desired: 1, Updated: 1, Available: 1, Observed: true}}, 10},
	} {
		if got := stepOf(tc.rollouts, "B"); got != tc.want {
			t.Errorf("%s: step %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A workload not yet written for the target has not started: its counts, of
// its earlier template, are not the target's.
func TestProgressOfAWorkloadNotStarted(t *testing.T) {
	rollouts := []Rollout{
		{Kind: "Deployment", Name: "controller", Version: "B", Desired: 1, Updated: 0, Available: 1, Old: 1, Observed: true},
		{Kind: "DaemonSet", Name: "speaker", Version: "A", Desired: 50, Updated: 50, Available: 50, Observed: true},
	}
	if got, want := progressOf(rollouts, "B"), "controller: 0 of 1 replicas updated, 1 old still running, speaker: not started"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	rollouts[1].Version = "B"
	if got, want := progressOf(rollouts, "B"), "controller: 0 of 1 replicas updated, 1 old still running, speaker: 50 of 50 nodes updated"; got != want {
		t.Errorf("progress %q, want %q", got, want)
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
