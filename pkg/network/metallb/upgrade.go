package metallb

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// workloads are MetalLB's two workloads, in rollout order.
var workloads = []struct {
	kind schema.GroupVersionKind
	name string
}{{deploymentKind, controllerName}, {daemonSetKind, speakerName}}

// holdSpeakers orders an upgrade: while the speaker DaemonSet runs another
// release and the controller, which serves the webhooks, has not finished
// rolling out the new one, the DaemonSet is left as it is. Its own
// RollingUpdate then paces the nodes.
func (p *Plan) holdSpeakers(s *Snapshot, settings Settings, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	target := settings.Images.ReleaseVersion
	if !speakersRunAnotherRelease(s, p.Adopt, settings.Namespace, target) {
		return want
	}
	if controller := s.owned(deploymentKind, settings.Namespace, controllerName); controller != nil {
		if c := status.RolloutOf(controller, ReleaseVersionAnnotation); c.Version == target && c.Done() {
			return want
		}
	}
	for _, o := range onlyKinds(want, daemonSetKind.Kind) {
		p.Held = append(p.Held, Held{o, fmt.Sprintf("the controller has not finished rolling out %s: the speakers follow it", target)})
	}
	return withoutKinds(want, daemonSetKind.Kind)
}

// speakersRunAnotherRelease tells whether the speaker DaemonSet runs a
// release other than target: an owned one says which in its annotation; one
// being adopted runs another installation's, whatever its version.
func speakersRunAnotherRelease(s *Snapshot, adopting []apply.Foreign, namespace, target string) bool {
	if speaker := s.owned(daemonSetKind, namespace, speakerName); speaker != nil {
		return speaker.GetAnnotations()[ReleaseVersionAnnotation] != target
	}
	return slices.ContainsFunc(adopting, func(f apply.Foreign) bool {
		return apply.KeyOf(f.Object) == apply.Key{GroupKind: daemonSetKind.GroupKind(), Namespace: namespace, Name: speakerName}
	})
}

// controllerAvailable tells whether MetalLB's controller serves.
func controllerAvailable(s *Snapshot, namespace string) bool {
	d := s.owned(deploymentKind, namespace, controllerName)
	if d == nil {
		return false
	}
	c := status.RolloutOf(d, ReleaseVersionAnnotation)
	return c.Observed && c.Available > 0 && c.Updated > 0
}

// track works out how far the rollouts of the workloads in want are, and
// whether one is hung.
func (p *Plan) track(s *Snapshot, settings Settings, want []*unstructured.Unstructured) {
	f := &p.found
	f.rollouts = rolloutsOf(s, want)
	f.tracking = status.Track(s.Tracking, settings.Images.ReleaseVersion, f.rollouts, f.now)
	if f.tracking != s.Tracking {
		p.Tracking = &f.tracking
	}
	if !f.tracking.InFlight() {
		return
	}
	if stalled := f.tracking.Stalled(f.now); stalled < p.opts.HungAfter {
		p.RequeueAfter = p.opts.HungAfter - stalled
		return
	}
	f.hung, f.hungNodes = true, notReadyNodes(s.SpeakerPods)
}

// rolloutsOf returns the rollouts of the workloads in want: one that does not
// exist yet has not rolled out.
func rolloutsOf(s *Snapshot, want []*unstructured.Unstructured) []status.Rollout {
	var rollouts []status.Rollout
	for _, w := range workloads {
		i := slices.IndexFunc(want, func(o *unstructured.Unstructured) bool {
			return o.GroupVersionKind() == w.kind && o.GetName() == w.name
		})
		if i < 0 {
			continue
		}
		if live := s.Owned[apply.KeyOf(want[i])]; live != nil {
			rollouts = append(rollouts, status.RolloutOf(live, ReleaseVersionAnnotation))
		} else {
			rollouts = append(rollouts, status.AbsentRollout(w.kind.Kind, want[i].GetNamespace(), w.name))
		}
	}
	return rollouts
}

// notReadyNodes names the nodes whose speaker pod is not ready.
func notReadyNodes(pods []corev1.Pod) []string {
	var nodes []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && !podReady(&p) && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func joinOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
