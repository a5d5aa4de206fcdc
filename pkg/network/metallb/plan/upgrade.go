package plan

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// workloadRef names a Deployment or a DaemonSet the module runs.
type workloadRef struct {
	kind schema.GroupVersionKind
	name string
}

// The workloads whose order the plan keeps.
var (
	controllerRef = workloadRef{objects.Deployment, manifests.ControllerName}
	speakerRef    = workloadRef{objects.DaemonSet, manifests.SpeakerName}
	frrK8sRef     = workloadRef{objects.DaemonSet, manifests.FRRK8sName}
)

// workloads are MetalLB's workloads, and frr-k8s's with that BGP backend, in
// rollout order: CRDs aside, the controller first (it serves the webhooks),
// then frr-k8s (the speakers announce through it), then the speakers.
var workloads = []workloadRef{controllerRef, {objects.Deployment, manifests.FRRK8sStatusCleaner}, frrK8sRef, speakerRef}

// in returns the index of the workload in objs, or -1.
func (w workloadRef) in(objs []*unstructured.Unstructured) int {
	return slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GroupVersionKind() == w.kind && o.GetName() == w.name
	})
}

// holdBehind orders an upgrade and a switch of BGP backend. While the speaker
// DaemonSet runs another release and the controller has not finished rolling
// out the new one, frr-k8s's DaemonSet and the speakers' are left as they
// are. With frr-k8s, the speakers also wait for frr-k8s to have finished
// rolling out this release on every node. The DaemonSets' own RollingUpdate
// then paces the nodes.
func (p *Plan) holdBehind(s *Snapshot, settings manifests.Settings, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	target := settings.Images.ReleaseVersion
	var why string
	held := []string{manifests.SpeakerName}
	switch {
	case speakersRunAnotherRelease(s, p.Adopt, settings.Namespace, target) && !finishedRollout(s, want, controllerRef, target):
		why = fmt.Sprintf("the controller has not finished rolling out %s: frr-k8s and the speakers follow it", target)
		held = append(held, manifests.FRRK8sName)
	case frrK8sRef.in(want) >= 0 && (!finishedRollout(s, want, frrK8sRef, target) || writing(s, want, frrK8sRef)):
		why = fmt.Sprintf("frr-k8s has not finished rolling out %s on every node: the speakers, which announce through it, follow it", target)
	default:
		return want
	}
	var kept []*unstructured.Unstructured
	for _, o := range want {
		if o.GroupVersionKind() == objects.DaemonSet && slices.Contains(held, o.GetName()) && objects.NeedsWrite(o, s.Owned[objects.KeyOf(o)]) {
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
	live := s.Owned[objects.KeyOf(want[i])]
	if live == nil {
		return false
	}
	r := status.RolloutOf(live, manifests.ReleaseVersionAnnotation)
	return r.Version == target && r.Done()
}

// writing tells whether this plan writes the workload: until its controller
// sees the new spec, its status is the old one's.
func writing(s *Snapshot, want []*unstructured.Unstructured, w workloadRef) bool {
	i := w.in(want)
	return i >= 0 && objects.NeedsWrite(want[i], s.Owned[objects.KeyOf(want[i])])
}

// keepFRRK8sWhileUsed keeps frr-k8s's objects out of prune while the
// speakers may still announce through it: when the BGP backend goes back to
// native, or to the platform's frr-k8s, the speakers roll out without it
// first, then frr-k8s goes. Its
// CRDs, and the FRRConfigurations in them, always stay.
func (p *Plan) keepFRRK8sWhileUsed(s *Snapshot, want, prune []*unstructured.Unstructured) []*unstructured.Unstructured {
	i := speakerRef.in(want)
	if i < 0 || finishedRollout(s, want, speakerRef, want[i].GetAnnotations()[manifests.ReleaseVersionAnnotation]) && !writing(s, want, speakerRef) {
		return prune
	}
	return p.holdFRRK8s(prune, "the speakers have not finished rolling out without this frr-k8s: it goes once they have")
}

// holdFRRK8s keeps frr-k8s's objects out of prune, held for why.
func (p *Plan) holdFRRK8s(prune []*unstructured.Unstructured, why string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range prune {
		if strings.HasPrefix(o.GetName(), manifests.FRRK8sPrefix) {
			p.Held = append(p.Held, Held{o, why})
			continue
		}
		out = append(out, o)
	}
	return out
}

// speakersRunAnotherRelease tells whether the speaker DaemonSet runs a
// release other than target: an owned one says which in its annotation; one
// being adopted runs another installation's, whatever its version.
func speakersRunAnotherRelease(s *Snapshot, adopting []objects.Ref, namespace, target string) bool {
	if speaker := s.OwnedObject(objects.DaemonSet, namespace, manifests.SpeakerName); speaker != nil {
		return speaker.GetAnnotations()[manifests.ReleaseVersionAnnotation] != target
	}
	return slices.ContainsFunc(adopting, func(r objects.Ref) bool {
		return r.GroupVersionKind == objects.DaemonSet && r.Namespace == namespace && r.Name == manifests.SpeakerName
	})
}

// speakersMoveOntoFRRK8s tells whether the speakers are moving from native BGP
// onto frr-k8s. On each node the native speaker's session goes with it, and
// frr-k8s opens the node's new one only once the new speaker has written its
// FRRConfiguration (MetalLB waits 3 s for more changes) and FRR has loaded it:
// 12 s after the old speaker stopped on an idle machine, 25 s under load
// (TestBGPBackendSwitch), long after the new speaker is ready. Unpaced, the
// rolling update took the next nodes' sessions down meanwhile, and the router
// lost every path (run 79). So from the write that starts the move until its
// rollout is done the speakers are paced as frr-k8s is; their DaemonSet's
// minReadySeconds is what tells that a move is under way, also to an operator
// restarted in the middle of one. A new installation has no path to lose.
func speakersMoveOntoFRRK8s(s *Snapshot, settings manifests.Settings) bool {
	live := s.OwnedObject(objects.DaemonSet, settings.Namespace, manifests.SpeakerName)
	if settings.BGPBackend != v1beta1.BGPBackendFRRK8s || live == nil {
		return false
	}
	if !speakersUseFRRK8s(live) {
		return true
	}
	paced, _, _ := unstructured.NestedInt64(live.Object, "spec", "minReadySeconds")
	return paced > 0 && !status.RolloutOf(live, manifests.ReleaseVersionAnnotation).Done()
}

// speakersUseFRRK8s tells whether the speaker DaemonSet's pods announce BGP
// through frr-k8s: their speaker container's manifests.BGPTypeEnv says so.
func speakersUseFRRK8s(speakers *unstructured.Unstructured) bool {
	containers, _, _ := unstructured.NestedSlice(speakers.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		c, _ := c.(map[string]any)
		if c["name"] != manifests.SpeakerName {
			continue
		}
		env, _, _ := unstructured.NestedSlice(c, "env")
		for _, e := range env {
			e, _ := e.(map[string]any)
			if e["name"] == manifests.BGPTypeEnv {
				return e["value"] == string(v1beta1.BGPBackendFRRK8s)
			}
		}
	}
	return false
}
