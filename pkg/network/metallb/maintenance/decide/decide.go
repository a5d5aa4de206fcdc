package decide

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// MarkAnnotation marks a node the operator labelled for its maintenance: it
// takes that label off again, and only that one. Its value says why.
const MarkAnnotation = "networkoperator.openshift.io/metallb-maintenance"

// Node is a node as maintenance sees it: the Node, and whether MetalLB's
// speaker on it is ready.
type Node struct {
	*corev1.Node
	SpeakerReady bool
}

// Scope is what the MetalLB module's plan tells maintenance: the signals,
// and the advertisements of which the last node stays.
type Scope struct {
	Signals        Signals
	Advertisements []Advertisement
}

// Advertisement is an L2Advertisement or a BGPAdvertisement, by the nodes it
// announces from: those NodeSelectors match, any of them (none: every node),
// and, for a BGPAdvertisement (BGP), that one of its peers selects too (a
// node no peer selects has no session to announce on).
type Advertisement struct {
	Kind, Name    string
	NodeSelectors Selectors
	BGP           bool
	Peers         []Selectors
}

// Selectors select the nodes any of them matches; none selects every node.
type Selectors []labels.Selector

// Selects tells whether one of the selectors, or none, selects a node.
func (s Selectors) Selects(n *corev1.Node) bool {
	return len(s) == 0 || slices.ContainsFunc(s, func(s labels.Selector) bool { return s.Matches(labels.Set(n.Labels)) })
}

// Selects tells whether an advertisement announces from a node.
func (a Advertisement) Selects(n *corev1.Node) bool {
	if a.BGP && !slices.ContainsFunc(a.Peers, func(p Selectors) bool { return p.Selects(n) }) {
		return false
	}
	return a.NodeSelectors.Selects(n)
}

// Decision is what to change: the nodes to label and mark (Leave, with why),
// those whose label and mark to take off (Return), and those in maintenance
// kept announcing (Held).
type Decision struct {
	Leave  map[string]string
	Return []string
	Held   []Held
}

// Held is a node in maintenance that stays in an advertisement's
// announcements: it is the last that could carry its addresses.
type Held struct {
	Node, Why     string
	Advertisement Advertisement
}

// Message says why a held node keeps announcing, and what to do.
func (h Held) Message() string {
	return fmt.Sprintf("Node %s is being taken down (%s) but keeps MetalLB's announcements: it is the last node "+
		"that could announce for %s %s. Bring another node it selects back first, or add one", h.Node, h.Why,
		h.Advertisement.Kind, h.Advertisement.Name)
}

// Decide decides, over every node at once, which nodes leave MetalLB's
// announcements and which return. A node leaves when a signal says it is
// going down, unless it is the last node that could announce for an
// advertisement; it returns, once no signal says so, when it is Ready and its
// speaker too, so that it announces again as soon as it can. With no signal
// at all (maintenance off, MetalLB deactivated), every node it marked returns
// at once. A node the operator did not mark is never changed: its label is the
// user's.
func Decide(signals Signals, nodes []Node, ads []Advertisement) Decision {
	d := Decision{Leave: map[string]string{}}
	nodes = slices.SortedFunc(slices.Values(nodes), func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	announcing := map[string]bool{}
	leaving := map[string]string{}
	for _, n := range nodes {
		_, marked := n.Annotations[MarkAnnotation]
		_, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]
		ready := n.SpeakerReady && status.NodeReady(n.Node)
		why := signals.InMaintenance(n.Node)
		switch {
		case marked && !signals.Any():
			d.Return = append(d.Return, n.Name) // maintenance off: all it put goes
		case marked && why == "" && ready:
			d.Return = append(d.Return, n.Name)
		case excluded:
			continue
		case why != "":
			leaving[n.Name] = why
		}
		announcing[n.Name] = ready
	}
	for _, n := range nodes {
		why, ok := leaving[n.Name]
		if !ok {
			continue
		}
		if ad, last := lastFor(n.Node, nodes, ads, announcing); last {
			d.Held = append(d.Held, Held{Node: n.Name, Why: why, Advertisement: ad})
			continue
		}
		d.Leave[n.Name] = why
		announcing[n.Name] = false
	}
	return d
}

// lastFor tells whether a node announcing is the last that could for one of
// the advertisements, and for which.
func lastFor(n *corev1.Node, nodes []Node, ads []Advertisement, announcing map[string]bool) (Advertisement, bool) {
	if !announcing[n.Name] {
		return Advertisement{}, false
	}
	for _, ad := range ads {
		if !ad.Selects(n) {
			continue
		}
		others := slices.ContainsFunc(nodes, func(o Node) bool {
			return o.Name != n.Name && announcing[o.Name] && ad.Selects(o.Node)
		})
		if !others {
			return ad, true
		}
	}
	return Advertisement{}, false
}
