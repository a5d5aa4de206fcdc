package plan

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// The workloads' pods are read only when the tracking read says the rollout
// may be hung: a plan is hung exactly when that tracking is (TestPlan's hung
// case names the nodes from the pods).
func TestMayBeHung(t *testing.T) {
	opts := planOptions()
	releaseB(&opts)
	for _, c := range []struct {
		name       string
		noProgress time.Duration // since the speakers' progress was recorded; 0: no rollout in flight
		want       bool
	}{
		{"no rollout in flight", 0, false},
		{"progress a minute ago", time.Minute, false},
		{"progress just short of the timeout", opts.HungAfter - time.Millisecond, false},
		{"no progress for the timeout", opts.HungAfter, true},
		{"no progress for longer", 2 * opts.HungAfter, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := speakersRolling(t, opts)
			if c.noProgress > 0 {
				s.Tracking.Since = metav1.NewMicroTime(now.Add(-c.noProgress - time.Minute))
				s.Tracking.LastProgress = s.Tracking.Since
				s.Tracking = *Make(s, opts, now.Add(-c.noProgress)).Tracking // the progress recorded then
			} else {
				s.Tracking = status.Tracking{Version: "A"} // as before the upgrade began
			}
			if got := MayBeHung(s.Tracking, opts, now); got != c.want {
				t.Errorf("MayBeHung = %v, want %v", got, c.want)
			}
			s.SpeakerPods = nil // as observe leaves them
			if p := Make(s, opts, now); p.hung != c.want {
				t.Errorf("the plan is hung: %v, want %v", p.hung, c.want)
			}
		})
	}
}

// The MetalLB object reports a release only once every workload ran it: on
// activation the tracking holds the release from before, when nothing was
// wanted (as the ClusterOperator reports it), and the object must not show it.
func TestMetalLBVersion(t *testing.T) {
	for _, c := range []struct {
		name     string
		reported string
		tracking status.Tracking
		want     string
	}{
		{"activation in flight", "", status.Tracking{Version: "A", Target: "A"}, ""},
		{"activation done", "", status.Tracking{Version: "A"}, "A"},
		{"upgrade in flight", "A", status.Tracking{Version: "A", Target: "B"}, "A"},
		{"upgrade done", "A", status.Tracking{Version: "B"}, "B"},
		{"a spec change in flight", "A", status.Tracking{Version: "A", Target: "A"}, "A"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := metallbVersion(c.reported, c.tracking); got != c.want {
				t.Errorf("metallbVersion(%q, %+v) = %q, want %q", c.reported, c.tracking, got, c.want)
			}
		})
	}
}
