package status

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tracking is what a status depends on that the live workloads do not tell:
// the version last reported, and the rollout in flight with its timers. The
// operator keeps it in the cluster, so that a restarted operator carries on the
// same rollout with the same timers and never reports a version early.
type Tracking struct {
	// Version is the version reported: every workload ran it, rolled out, when
	// it was set.
	Version string `json:"version,omitempty"`
	// Target is the version of the rollout in flight, if one is.
	Target string `json:"target,omitempty"`
	// Since is when that rollout started; LastProgress when its progress was
	// last recorded.
	Since        metav1.MicroTime `json:"since,omitzero"`
	LastProgress metav1.MicroTime `json:"lastProgress,omitzero"`
	// Progress records what the rollouts said at LastProgress: the
	// Progressing condition's message shows it.
	Progress string `json:"progress,omitempty"`
}

// Track moves tracking on by what the rollouts of the workloads, all rendered
// for target, show at now. While the rollout is under way its progress is
// recorded at most once every: a later change waits (ProgressDue).
func Track(prev Tracking, target string, rollouts []Rollout, now time.Time, every time.Duration) Tracking {
	if allDone(rollouts, target) {
		return Tracking{Version: target}
	}
	next := prev
	progress := progressOf(rollouts)
	switch {
	case prev.Target != target:
		next.Target, next.Since, next.LastProgress, next.Progress = target, metav1.NewMicroTime(now), metav1.NewMicroTime(now), progress
	case prev.Progress != progress && now.Sub(prev.LastProgress.Time) >= every:
		next.LastProgress, next.Progress = metav1.NewMicroTime(now), progress
	}
	return next
}

// ProgressDue tells how long until the progress the rollouts show, not yet
// recorded, may be; 0 when it is recorded.
func (t Tracking) ProgressDue(rollouts []Rollout, now time.Time, every time.Duration) time.Duration {
	if !t.InFlight() || t.Progress == progressOf(rollouts) {
		return 0
	}
	return max(every-now.Sub(t.LastProgress.Time), 0)
}

// InFlight tells whether a rollout is under way.
func (t Tracking) InFlight() bool { return t.Target != "" }

// Stalled tells how long the rollout in flight has made no progress.
func (t Tracking) Stalled(now time.Time) time.Duration {
	if !t.InFlight() {
		return 0
	}
	return now.Sub(t.LastProgress.Time)
}

func allDone(rollouts []Rollout, target string) bool {
	for _, r := range rollouts {
		if !r.Done() || r.Version != target {
			return false
		}
	}
	return true
}

// progressOf says how far the rollouts are, each by its message, which
// changes with its counts.
func progressOf(rollouts []Rollout) string {
	parts := make([]string, len(rollouts))
	for i, r := range rollouts {
		parts[i] = r.Message()
	}
	return strings.Join(parts, ", ")
}
