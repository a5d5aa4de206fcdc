package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// FRRK8sHandover is how long after a batch of frr-k8s's pods was deleted the
// next waits: on a node the session to a router moves from frr-k8s's FRR to
// the native speaker (or OpenShift's FRR) once that FRR has stopped, the
// router refusing a second session from the node's address until then (BGP's
// collision resolution). The speaker retries at once: its session came 30 to
// 390 ms after FRR stopped (TestBGPBackendSwitch).
const FRRK8sHandover = 3 * time.Second

// terminatingRecheck is how soon a reconcile looks again at pods deleted but
// still stopping: pods are not watched.
const terminatingRecheck = time.Second

// leaveNodeByNode has the module's frr-k8s leave the nodes a batch of
// maxUnavailable at a time when the speakers no longer announce through it.
// Deleted with its DaemonSet, every node's FRR stopped at once, and the
// router lost every path for a moment (0 of 3 next hops in CI). So the
// DaemonSet is deleted leaving its pods (Orphan), which are then deleted a
// batch at a time (Retire), FRRK8sHandover apart. frr-k8s's other objects
// stay until its last pod is gone, and tell a restarted operator that some
// may be left (FRRK8sMayBeLeaving). With MetalLB going too there is nothing
// to hand over: what is left goes at once.
func (p *Plan) leaveNodeByNode(s *Snapshot, want, prune []*unstructured.Unstructured) []*unstructured.Unstructured {
	if frrK8sRef.in(want) >= 0 {
		return prune // chosen again: its DaemonSet takes back the pods left
	}
	leaving := orphans(s.FRRK8sPods)
	handover := speakerRef.in(want) >= 0
	daemon := slices.IndexFunc(prune, isFRRK8sDaemon)
	live := s.OwnedObject(objects.DaemonSet, p.opts.Namespace, manifests.FRRK8sName)
	going := handover && (daemon >= 0 || live != nil && live.GetDeletionTimestamp() != nil)
	if !going && len(leaving) == 0 {
		return prune
	}
	p.frrK8sLeaving, p.frrK8sPods = true, len(s.FRRK8sPods)
	if daemon >= 0 && handover {
		p.Orphan = append(p.Orphan, objects.RefOf(prune[daemon]))
		prune = slices.Delete(slices.Clone(prune), daemon, daemon+1)
	}
	out := p.holdFRRK8s(prune, "frr-k8s's pods have not left every node yet: it goes once they have")
	switch {
	case len(leaving) == 0:
	case handover:
		p.retire(leaving, s.FRRK8sLeftAt, p.batchOf(s))
	default:
		p.retire(leaving, time.Time{}, len(leaving))
	}
	return out
}

// retire deletes the next batch of frr-k8s's pods left on the nodes, once
// none of the last batch is still stopping and FRRK8sHandover has passed
// since it was deleted (at leftAt).
func (p *Plan) retire(leaving []corev1.Pod, leftAt time.Time, batch int) {
	if slices.ContainsFunc(leaving, func(pod corev1.Pod) bool { return pod.DeletionTimestamp != nil }) {
		p.handoverRecheck = terminatingRecheck
		return
	}
	if wait := FRRK8sHandover - p.now.Sub(leftAt); wait > 0 {
		p.handoverRecheck = wait
		return
	}
	slices.SortFunc(leaving, func(a, b corev1.Pod) int { return cmp.Compare(a.Spec.NodeName, b.Spec.NodeName) })
	for _, pod := range leaving[:min(batch, len(leaving))] {
		p.Retire = append(p.Retire, objects.Ref{GroupVersionKind: objects.Pod, Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID})
	}
	p.handoverRecheck = FRRK8sHandover
}

// batchOf is how many nodes frr-k8s leaves at a time: the speakers'
// maxUnavailable, of the nodes they run on; at least one.
func (p *Plan) batchOf(s *Snapshot) int {
	nodes := 0
	if speakers := s.OwnedObject(objects.DaemonSet, p.opts.Namespace, manifests.SpeakerName); speakers != nil {
		nodes = int(status.RolloutOf(speakers, manifests.ReleaseVersionAnnotation).Desired)
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&p.maxUnavailable, nodes, true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// FRRK8sMayBeLeaving tells whether frr-k8s's pods may be running without
// their DaemonSet, leaving the nodes (leaveNodeByNode): its DaemonSet is gone
// or going while its other objects, kept until the pods have left, remain.
// Only then, or for a hung rollout, are the pods read.
func FRRK8sMayBeLeaving(s *Snapshot, namespace string) bool {
	if daemon := s.OwnedObject(objects.DaemonSet, namespace, manifests.FRRK8sName); daemon != nil && daemon.GetDeletionTimestamp() == nil {
		return false
	}
	for key := range s.Owned {
		if key.Namespace == namespace && strings.HasPrefix(key.Name, manifests.FRRK8sPrefix) && key.GroupKind != objects.DaemonSet.GroupKind() {
			return true
		}
	}
	return false
}

// orphans are those of frr-k8s's pods that a DaemonSet made (the DaemonSet
// controller's revision label says so) and no controller owns any more: its
// DaemonSet was deleted leaving them, the garbage collector took the owner
// away. A pod of those labels someone made by hand is not one.
func orphans(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, pod := range pods {
		if pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != "" && metav1.GetControllerOf(&pod) == nil {
			out = append(out, pod)
		}
	}
	return out
}

func isFRRK8sDaemon(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind() == objects.DaemonSet && o.GetName() == manifests.FRRK8sName
}

// leavingMessage is the Progressing condition's message while frr-k8s leaves
// the nodes.
func (p *Plan) leavingMessage() string {
	m := fmt.Sprintf("frr-k8s leaves the nodes %s at a time, each handing its BGP sessions over", p.maxUnavailable.String())
	if p.frrK8sPods > 0 {
		m += fmt.Sprintf(": its pods run on %d nodes still", p.frrK8sPods)
	}
	return m
}
