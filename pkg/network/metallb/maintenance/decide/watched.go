package decide

import (
	"hash/maphash"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Watched is what maintenance keeps of a Node between reads, in a few fixed
// fields (a cluster has thousands of Nodes): what tells it that a node may
// be going down or coming back. The labels, which a signal or an
// advertisement's selector may name, are kept as a digest only: a change of
// them is what counts, and maintenance reads them afresh when it decides.
type Watched struct {
	Ready, Unschedulable, Marked, DrainAsked bool
	Taints                                   []string // keys
	Digest                                   uint64   // of the labels and of the annotations Signals read
}

// digestSeed seeds the digests: they are compared within one process only.
var digestSeed = maphash.MakeSeed()

// Watch is what maintenance keeps of a Node.
func Watch(n *corev1.Node) Watched {
	w := Watched{Ready: status.NodeReady(n), Unschedulable: n.Spec.Unschedulable}
	_, w.Marked = n.Annotations[MarkAnnotation]
	w.DrainAsked = drainRequested(n)
	for _, t := range n.Spec.Taints {
		w.Taints = append(w.Taints, t.Key)
	}
	var h maphash.Hash
	h.SetSeed(digestSeed)
	pair := func(k, v string) uint64 {
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		return h.Sum64()
	}
	for k, v := range n.Labels { // in any order: XOR commutes
		w.Digest ^= pair(k, v)
	}
	for _, k := range []string{MarkAnnotation, DesiredDrainAnnotation} {
		if v, ok := n.Annotations[k]; ok {
			w.Digest ^= pair("annotation "+k, v)
		}
	}
	return w
}

// Equal tells whether two nodes look the same to maintenance.
func (w Watched) Equal(o Watched) bool {
	return w.Ready == o.Ready && w.Unschedulable == o.Unschedulable && w.Marked == o.Marked &&
		w.DrainAsked == o.DrainAsked && w.Digest == o.Digest && slices.Equal(w.Taints, o.Taints)
}

// MayBeInMaintenance tells, of a node as maintenance keeps it, that it may
// need a decision: it is marked, or carries a signal the kept fields show. A
// label signal is not among them: the nodes that carry one are read by its
// selector (LabelSelector).
func (s Signals) MayBeInMaintenance(w Watched) bool {
	return w.Marked || (s.MachineConfigDrain && w.DrainAsked) || (s.Cordon && w.Unschedulable) ||
		slices.ContainsFunc(w.Taints, func(k string) bool { return slices.Contains(s.Taints, k) })
}
