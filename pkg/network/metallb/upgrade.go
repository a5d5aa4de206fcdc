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

// workloadRef names a Deployment or a DaemonSet the module runs.
type workloadRef struct {
	kind schema.GroupVersionKind
	name string
}

// metallbWorkloads are MetalLB's own: its controller and its speakers.
var metallbWorkloads = []workloadRef{{deploymentKind, controllerName}, {daemonSetKind, speakerName}}

// workloads are MetalLB's workloads, and frr-k8s's with that BGP backend, in
// rollout order: CRDs aside, the controller first (it serves the webhooks),
// then frr-k8s (the speakers announce through it), then the speakers.
var workloads = []workloadRef{controllerRef, {deploymentKind, frrK8sStatusCleaner}, frrK8sRef, speakerRef}

// in returns the index of the workload in objs, or -1.
func (w workloadRef) in(objs []*unstructured.Unstructured) int {
	return slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GroupVersionKind() == w.kind && o.GetName() == w.name
	})
}

// The workloads whose order the plan keeps.
var (
	controllerRef = metallbWorkloads[0]
	speakerRef    = metallbWorkloads[1]
	frrK8sRef     = workloadRef{daemonSetKind, frrK8sName}
)

// holdBehind orders an upgrade and a switch of BGP backend. While the speaker
// DaemonSet runs another release and the controller has not finished rolling
// out the new one, frr-k8s's DaemonSet and the speakers' are left as they
// are. With frr-k8s, the speakers also wait for frr-k8s to have finished
// rolling out this release on every node. The DaemonSets' own RollingUpdate
// then paces the nodes.
func (p *Plan) holdBehind(s *Snapshot, settings Settings, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	target := settings.Images.ReleaseVersion
	var why string
	held := []string{speakerName}
	switch {
	case speakersRunAnotherRelease(s, p.Adopt, settings.Namespace, target) && !finishedRollout(s, want, controllerRef, target):
		why = fmt.Sprintf("the controller has not finished rolling out %s: frr-k8s and the speakers follow it", target)
		held = append(held, frrK8sName)
	case frrK8sRef.in(want) >= 0 && (!finishedRollout(s, want, frrK8sRef, target) || writing(s, want, frrK8sRef)):
		why = fmt.Sprintf("frr-k8s has not finished rolling out %s on every node: the speakers, which announce through it, follow it", target)
	default:
		return want
	}
	var kept []*unstructured.Unstructured
	for _, o := range want {
		if o.GetKind() == daemonSetKind.Kind && slices.Contains(held, o.GetName()) && apply.NeedsWrite(o, s.Owned[apply.KeyOf(o)]) {
			p.Held = append(p.Held, Held{o, why})
			continue
		}
		kept = append(kept, o)
	}
	return kept
}

// finishedRollout tells whether the workload, as the cluster holds it, was
// written for target and runs its spec on all its pods.
func finishedRollout(s *Snapshot, want []*unstructured.Unstructured, w workloadRef, target string) bool {
	i := w.in(want)
	if i < 0 {
		return false
	}
	live := s.Owned[apply.KeyOf(want[i])]
	if live == nil {
		return false
	}
	r := status.RolloutOf(live, ReleaseVersionAnnotation)
	return r.Version == target && r.Done()
}

// writing tells whether this plan writes the workload: until its controller
// sees the new spec, its status is the old one's.
func writing(s *Snapshot, want []*unstructured.Unstructured, w workloadRef) bool {
	i := w.in(want)
	return i >= 0 && apply.NeedsWrite(want[i], s.Owned[apply.KeyOf(want[i])])
}

// keepFRRK8sWhileUsed keeps frr-k8s's objects out of prune while the
// speakers may still announce through it: when the BGP backend goes back to
// native, the speakers roll out without it first, then frr-k8s goes. Its
// CRDs, and the FRRConfigurations in them, always stay.
func (p *Plan) keepFRRK8sWhileUsed(s *Snapshot, want, prune []*unstructured.Unstructured) []*unstructured.Unstructured {
	i := speakerRef.in(want)
	if i < 0 || finishedRollout(s, want, speakerRef, want[i].GetAnnotations()[ReleaseVersionAnnotation]) && !writing(s, want, speakerRef) {
		return prune
	}
	var out []*unstructured.Unstructured
	for _, o := range prune {
		if strings.HasPrefix(o.GetName(), frrK8sPrefix) {
			p.Held = append(p.Held, Held{o, "the speakers have not finished rolling out without frr-k8s: frr-k8s goes once they have"})
			continue
		}
		out = append(out, o)
	}
	return out
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

// available tells whether an owned Deployment has an available pod of its
// current template.
func available(s *Snapshot, namespace, deployment string) bool {
	d := s.owned(deploymentKind, namespace, deployment)
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
	f.hung, f.hungNodes, f.hungFRRK8sNodes = true, notReadyNodes(s.SpeakerPods), notReadyNodes(s.FRRK8sPods)
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
		if live := s.Owned[apply.KeyOf(want[i])]; live != nil {
			rollouts = append(rollouts, status.RolloutOf(live, ReleaseVersionAnnotation))
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
