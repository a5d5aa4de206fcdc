package noderunner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
)

// A container that keeps failing is restarted as the kubelet restarts it: at
// once the first time, then after 10 s, 20 s, 40 s... up to 5 min; and at
// once again after it ran for more than 10 min.
func TestRestartBackoff(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := flowcontrol.NewFakeBackOff(backoffBase, backoffMax, clock)
	var waits []time.Duration
	for range 8 { // each run lasts 1 s, then waits out what is left
		clock.Step(time.Second)
		finished := clock.Now()
		left, delay := restartWait(b, "speaker", finished)
		if left != delay {
			t.Fatalf("left %s of a back-off of %s at once after the exit", left, delay)
		}
		waits = append(waits, delay)
		if left == 0 {
			continue // restarted
		}
		clock.Step(left)
		if left, _ := restartWait(b, "speaker", finished); left != 0 {
			t.Fatalf("still %s to wait once the back-off is over", left)
		}
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("restarts waited %v, want %v", waits, want)
		}
	}
	clock.Step(11 * time.Minute) // a long, healthy run
	if left, _ := restartWait(b, "speaker", clock.Now()); left != 0 {
		t.Errorf("after a run of 11 min the restart waits %s; the kubelet forgets the back-off after 10", left)
	}
}

// A probe's result changes once its outcome came its threshold's times in a
// row; before any, readiness fails, liveness passes and startup is unknown.
func TestProberThresholds(t *testing.T) {
	spec := &corev1.Probe{FailureThreshold: 3, SuccessThreshold: 2}
	now := time.Now()
	ready := newProber(spec, readinessProbe, now)
	live := newProber(spec, livenessProbe, now)
	start := newProber(spec, startupProbe, now)
	if *ready.result || !*live.result || start.result != nil {
		t.Fatalf("before any probe: ready %v, live %v, started %v", *ready.result, *live.result, start.result)
	}
	for i, tc := range []struct {
		ok                   bool
		readyChanged, liveCh bool
	}{
		{ok: true}, {ok: true, readyChanged: true}, {ok: false}, {ok: false}, {ok: true}, {ok: false}, {ok: false}, {ok: false, readyChanged: true, liveCh: true},
	} {
		if got := ready.record(tc.ok); got != tc.readyChanged {
			t.Errorf("outcome %d (%v): readiness changed %v, want %v", i, tc.ok, got, tc.readyChanged)
		}
		if got := live.record(tc.ok); got != tc.liveCh {
			t.Errorf("outcome %d (%v): liveness changed %v, want %v", i, tc.ok, got, tc.liveCh)
		}
	}
	for range 2 {
		start.record(false)
	}
	if !start.record(false) || *start.result {
		t.Errorf("a startup probe failing three times in a row did not fail")
	}
}
