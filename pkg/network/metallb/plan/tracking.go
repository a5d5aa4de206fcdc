package plan

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// track works out how far the rollouts of the workloads in want are, and
// whether one is hung.
func (p *Plan) track(s *Snapshot, settings manifests.Settings, want []*unstructured.Unstructured) {
	p.rollouts = rolloutsOf(s, want)
	p.tracking = status.Track(s.Tracking, settings.Images.ReleaseVersion, p.rollouts, p.now, p.opts.progressRefresh())
	if p.tracking != s.Tracking {
		p.Tracking = new(p.tracking)
	}
	if !p.tracking.InFlight() {
		return
	}
	// With no event, look again when the progress held back may be recorded,
	// or when the rollout would be hung.
	due := p.tracking.ProgressDue(p.rollouts, p.now, p.opts.progressRefresh())
	if !MayBeHung(p.tracking, p.opts, p.now) {
		p.RequeueAfter = p.opts.HungAfter - p.tracking.Stalled(p.now)
		if due > 0 {
			p.RequeueAfter = min(p.RequeueAfter, due)
		}
		return
	}
	p.hung, p.hungNodes, p.hungFRRK8sNodes = true, notReadyNodes(s.SpeakerPods), notReadyNodes(s.FRRK8sPods)
}

// MayBeHung tells whether the rollout tracked is hung at now: it has made no
// progress for HungAfter. Only then does the plan read the workloads' pods
// (Snapshot.SpeakerPods), to name the nodes it waits for; the progress it
// holds back never moves LastProgress past the tracking read, so a tracking
// read that is not hung yet gives no hung plan.
func MayBeHung(t status.Tracking, opts Options, now time.Time) bool {
	return t.InFlight() && t.Stalled(now) >= opts.HungAfter
}

// rolloutsOf returns the rollouts of the workloads in want: one that does not
// exist yet has not rolled out.
func rolloutsOf(s *Snapshot, want []*unstructured.Unstructured) []status.Rollout {
	var rollouts []status.Rollout
	for _, w := range workloads {
		i := w.in(want)
		if i < 0 {
			continue
		}
		if live := s.Owned[objects.KeyOf(want[i])]; live != nil {
			r := status.RolloutOf(live, manifests.ReleaseVersionAnnotation)
			if w.kind == objects.DaemonSet {
				r.Refused = refusedCreate(s.PodCreations, live.GetUID(), r.Missing)
			}
			rollouts = append(rollouts, r)
		} else {
			rollouts = append(rollouts, status.AbsentRollout(w.kind.Kind, want[i].GetNamespace(), w.name))
		}
	}
	return rollouts
}

// notReadyNodes names the nodes where one of pods is not ready.
func notReadyNodes(pods []corev1.Pod) []string {
	var nodes []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && !status.PodReady(&p) && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes
}
