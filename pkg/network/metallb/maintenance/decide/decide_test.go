package decide

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// node builds a Ready node whose speaker is ready, changed by each of opts.
func node(name string, opts ...func(*Node)) Node {
	n := Node{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}, SpeakerReady: true}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func drainAsked(n *Node)    { n.Annotations[DesiredDrainAnnotation] = "drain-rendered-worker-1a2b" }
func uncordonAsked(n *Node) { n.Annotations[DesiredDrainAnnotation] = "uncordon-rendered-worker-1a2b" }
func excluded(n *Node)      { n.Labels[corev1.LabelNodeExcludeBalancers] = "" }
func marked(n *Node)        { excluded(n); n.Annotations[MarkAnnotation] = "drain" }
func cordoned(n *Node)      { n.Spec.Unschedulable = true }
func notReady(n *Node)      { n.Status.Conditions[0].Status = corev1.ConditionFalse }
func speakerDown(n *Node)   { n.SpeakerReady = false }
func label(k, v string) func(*Node) {
	return func(n *Node) { n.Labels[k] = v }
}
func taint(key string) func(*Node) {
	return func(n *Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

func selecting(kind, name, selector string) Advertisement {
	s, err := labels.Parse(selector)
	if err != nil {
		panic(err)
	}
	return Advertisement{Kind: kind, Name: name, NodeSelectors: []labels.Selector{s}}
}

// throughPeers is a BGPAdvertisement of every node, to peers that select
// the nodes each selector matches.
func throughPeers(name string, peers ...string) Advertisement {
	a := Advertisement{Kind: "BGPAdvertisement", Name: name, BGP: true, Peers: []Selectors{}}
	for _, p := range peers {
		a.Peers = append(a.Peers, selecting("", "", p).NodeSelectors)
	}
	return a
}

var (
	openshift = Signals{MachineConfigDrain: true}
	everyNode = []Advertisement{{Kind: "L2Advertisement", Name: "l2"}}
)

// decideCase is a row of TestDecide.
type decideCase struct {
	name    string
	signals Signals
	nodes   []Node
	ads     []Advertisement
	leave   []string
	back    []string
	held    []string // node/advertisement
}

var decideCases = []decideCase{
	{name: "nothing in maintenance", signals: openshift, nodes: []Node{node("a"), node("b")}, ads: everyNode},
	{name: "a drain asked: the node leaves", signals: openshift,
		nodes: []Node{node("a", drainAsked), node("b")}, ads: everyNode, leave: []string{"a"}},
	{name: "drains not a signal: nothing", signals: Signals{},
		nodes: []Node{node("a", drainAsked), node("b")}, ads: everyNode},
	{name: "rebooted, its drain still asked: it stays out", signals: openshift,
		nodes: []Node{node("a", drainAsked, marked, notReady, speakerDown), node("b")}, ads: everyNode},
	{name: "uncordon asked, the node Ready, its speaker not yet: it stays out", signals: openshift,
		nodes: []Node{node("a", uncordonAsked, marked, speakerDown), node("b")}, ads: everyNode},
	{name: "uncordon asked, node and speaker ready: it returns", signals: openshift,
		nodes: []Node{node("a", uncordonAsked, marked), node("b")}, ads: everyNode, back: []string{"a"}},
	{name: "cordoned, cordons not a signal: nothing", signals: openshift,
		nodes: []Node{node("a", cordoned), node("b")}, ads: everyNode},
	{name: "cordoned, cordons a signal: it leaves", signals: Signals{Cordon: true},
		nodes: []Node{node("a", cordoned), node("b")}, ads: everyNode, leave: []string{"a"}},
	{name: "a label named: it leaves", signals: Signals{Labels: []string{"kured.io/rebooting"}},
		nodes: []Node{node("a", label("kured.io/rebooting", "true")), node("b")}, ads: everyNode, leave: []string{"a"}},
	{name: "a label's value named: it leaves", signals: Signals{Labels: []string{"example.com/rebooting=true"}},
		nodes: []Node{node("a", label("example.com/rebooting", "true")), node("b")}, ads: everyNode, leave: []string{"a"}},
	{name: "a label's value named, another value: nothing", signals: Signals{Labels: []string{"example.com/rebooting=true"}},
		nodes: []Node{node("a", label("example.com/rebooting", "false")), node("b")}, ads: everyNode},
	{name: "a taint named: it leaves", signals: Signals{Taints: []string{"weave.works/kured-node-reboot"}},
		nodes: []Node{node("a", taint("weave.works/kured-node-reboot")), node("b")}, ads: everyNode, leave: []string{"a"}},
	{name: "the user's label: never taken off", signals: openshift,
		nodes: []Node{node("a", excluded), node("b")}, ads: everyNode},
	{name: "the user's label, in maintenance: nothing to do", signals: openshift,
		nodes: []Node{node("a", excluded, drainAsked), node("b")}, ads: everyNode},
	{name: "the only node: held", signals: openshift,
		nodes: []Node{node("a", drainAsked)}, ads: everyNode, held: []string{"a/l2"}},
	{name: "two asked at once of three: both leave", signals: openshift,
		nodes: []Node{node("a", drainAsked), node("b", drainAsked), node("c")}, ads: everyNode, leave: []string{"a", "b"}},
	{name: "every node asked: the last by name held", signals: openshift,
		nodes: []Node{node("c", drainAsked), node("a", drainAsked), node("b", drainAsked)}, ads: everyNode,
		leave: []string{"a", "b"}, held: []string{"c/l2"}},
	{name: "the other node's speaker not ready: held", signals: openshift,
		nodes: []Node{node("a", drainAsked), node("b", speakerDown)}, ads: everyNode, held: []string{"a/l2"}},
	{name: "the other node excluded by its user: held", signals: openshift,
		nodes: []Node{node("a", drainAsked), node("b", excluded)}, ads: everyNode, held: []string{"a/l2"}},
	{name: "the last of an advertisement's nodes: held, though others announce for another", signals: openshift,
		nodes: []Node{node("a", drainAsked, label("edge", "")), node("b")},
		ads:   []Advertisement{selecting("BGPAdvertisement", "edge", "edge"), {Kind: "L2Advertisement", Name: "l2"}},
		held:  []string{"a/edge"}},
	{name: "the last node a BGPAdvertisement's peers select: held", signals: openshift,
		nodes: []Node{node("a", drainAsked, label("rack", "1")), node("b")},
		ads:   []Advertisement{throughPeers("bgp", "rack=1")}, held: []string{"a/bgp"}},
	{name: "another node a peer selects: it leaves", signals: openshift,
		nodes: []Node{node("a", drainAsked, label("rack", "1")), node("b"), node("c", label("rack", "2"))},
		ads:   []Advertisement{throughPeers("bgp", "rack=1", "rack=2")}, leave: []string{"a"}},
	{name: "a BGPAdvertisement with no peer: announces nothing, it leaves", signals: openshift,
		nodes: []Node{node("a", drainAsked)}, ads: []Advertisement{throughPeers("bgp")}, leave: []string{"a"}},
	{name: "no advertisement: nothing announced, it leaves", signals: openshift,
		nodes: []Node{node("a", drainAsked)}, leave: []string{"a"}},
	{name: "its own speaker down: nothing lost, it leaves", signals: openshift,
		nodes: []Node{node("a", drainAsked, speakerDown)}, ads: everyNode, leave: []string{"a"}},
	{name: "maintenance off: every node marked returns, ready or not", signals: Signals{},
		nodes: []Node{node("a", drainAsked, marked, notReady, speakerDown), node("b", marked), node("c", excluded)}, ads: everyNode,
		back: []string{"a", "b"}},
	{name: "one returns as another leaves: it takes over", signals: openshift,
		nodes: []Node{node("a", uncordonAsked, marked), node("b", drainAsked)}, ads: everyNode,
		back: []string{"a"}, leave: []string{"b"}},
}

func TestDecide(t *testing.T) {
	for _, tc := range decideCases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.signals, tc.nodes, tc.ads)
			var held []string
			for _, h := range d.Held {
				held = append(held, h.Node+"/"+h.Advertisement.Name)
			}
			if leave := slices.Sorted(maps.Keys(d.Leave)); !slices.Equal(leave, tc.leave) || !slices.Equal(d.Return, tc.back) || !slices.Equal(held, tc.held) {
				t.Errorf("leave %q, return %q, held %q; want %q, %q, %q", leave, d.Return, held, tc.leave, tc.back, tc.held)
			}
		})
	}
}

// Why a node leaves is said in words a user can act on.
func TestWhyANodeLeaves(t *testing.T) {
	d := Decide(openshift, []Node{node("a", drainAsked), node("b")}, everyNode)
	if want := "the machine-config daemon asked for its drain (machineconfiguration.openshift.io/desiredDrain: drain-rendered-worker-1a2b)"; d.Leave["a"] != want {
		t.Errorf("why: %q, want %q", d.Leave["a"], want)
	}
}
