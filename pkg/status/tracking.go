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
	// Step records how far they were then, in tenths of their pods done,
	// updated and available (stepOf): the next is recorded at once.
	Step int `json:"step,omitempty"`
}

// Track moves tracking on by what the rollouts of the workloads, all rendered
// for target, show at now. While the rollout is under way its progress is
// recorded when it reaches a further step, a tenth more of the pods done,
// so that its writes do not grow with its length (a rollout of 2,000 nodes
// wrote its progress every 5 s, 34 times over); a change within a step is
// recorded once refresh has passed since the last record (ProgressDue), so
// that a slow rollout that still moves is never taken for a hung one.
func Track(prev Tracking, target string, rollouts []Rollout, now time.Time, refresh time.Duration) Tracking {
	if allDone(rollouts, target) {
		return Tracking{Version: target}
	}
	next := prev
	progress, step := progressOf(rollouts, target), stepOf(rollouts, target)
	switch {
	case prev.Target != target:
		next.Target, next.Since = target, metav1.NewMicroTime(now)
	case step > prev.Step:
	case prev.Progress != progress && now.Sub(prev.LastProgress.Time) >= refresh:
	default:
		return next
	}
	next.LastProgress, next.Progress, next.Step = metav1.NewMicroTime(now), progress, step
	return next
}

// stepOf tells how far the rollouts to target are in tenths of all their
// pods (a Deployment's replicas, a DaemonSet's nodes) done, updated and
// available: 0 to 10. A workload not yet written for target, or whose
// controller has not seen its spec yet, has none done; each pod of an old
// template a Deployment still runs counts one fewer done, as a Deployment is
// not done until they are gone (Rollout.Done), so that their going is a step,
// recorded at once. While pods of the old template come and go the step may
// fall back; Track records only a further one.
func stepOf(rollouts []Rollout, target string) int {
	var desired, done int64
	for _, r := range rollouts {
		desired += r.Desired
		if r.Observed && r.Version == target {
			done += max(min(r.Updated, r.Available, r.Desired)-r.Old, 0)
		}
	}
	if desired == 0 {
		return 0
	}
	return int(10 * done / desired)
}

// ProgressDue tells how long until the progress the rollouts show, not yet
// recorded and within the step recorded, may be; 0 when it is recorded.
func (t Tracking) ProgressDue(rollouts []Rollout, now time.Time, refresh time.Duration) time.Duration {
	if !t.InFlight() || t.Progress == progressOf(rollouts, t.Target) {
		return 0
	}
	return max(refresh-now.Sub(t.LastProgress.Time), 0)
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

// progressOf says how far the rollouts to target are, each by its message,
// which changes with its counts. A workload not yet written for target has
// not started: its counts are of its earlier template, and "speaker: 50 of
// 50 nodes updated" while the controller rolled out told an SRE the speakers
// were done before they began.
func progressOf(rollouts []Rollout, target string) string {
	parts := make([]string, len(rollouts))
	for i, r := range rollouts {
		parts[i] = r.Message()
		if !r.Absent && r.Version != target {
			parts[i] = r.Name + ": not started"
		}
	}
	return strings.Join(parts, ", ")
}
