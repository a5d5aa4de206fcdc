package decide

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Only a change that maintenance reads makes a node look different to it.
func TestWatchSeesWhatMaintenanceReads(t *testing.T) {
	base := node("a")
	for _, tc := range []struct {
		name    string
		change  func(*Node)
		differs bool
	}{
		{"another annotation", func(n *Node) { n.Annotations["x"] = "y" }, false},
		{"its status's addresses", func(n *Node) { n.Status.Addresses = []corev1.NodeAddress{{Address: "192.0.2.1"}} }, false},
		{"a label", label("kured.io/rebooting", ""), true},
		{"a label's value", func(n *Node) { n.Labels["rack"] = "2" }, true},
		{"the drain asked", drainAsked, true},
		{"the uncordon asked", uncordonAsked, true},
		{"the mark", marked, true},
		{"cordoned", cordoned, true},
		{"not ready", notReady, true},
		{"a taint", taint("t"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := node("a", label("rack", "1"))
			before := Watch(changed.Node)
			tc.change(&changed)
			if got := !Watch(changed.Node).Equal(before); got != tc.differs {
				t.Errorf("differs: %v, want %v", got, tc.differs)
			}
		})
	}
	if !Watch(base.Node).Equal(Watch(node("a").Node)) {
		t.Error("the same node watched twice differs")
	}
}

// A node is read when the kept fields show a mark or a signal, and by its
// selector when a label signal is named.
func TestMayBeInMaintenance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signals Signals
		node    Node
		may     bool
	}{
		{"nothing", openshift, node("a"), false},
		{"a drain asked", openshift, node("a", drainAsked), true},
		{"a drain asked, drains not a signal", Signals{}, node("a", drainAsked), false},
		{"marked, maintenance off", Signals{}, node("a", marked), true},
		{"cordoned, not a signal", openshift, node("a", cordoned), false},
		{"cordoned, a signal", Signals{Cordon: true}, node("a", cordoned), true},
		{"another taint", Signals{Taints: []string{"t"}}, node("a", taint("u")), false},
		{"the taint named", Signals{Taints: []string{"t"}}, node("a", taint("t")), true},
		{"a label named: read by its selector", Signals{Labels: []string{"l"}}, node("a", label("l", "")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.signals.MayBeInMaintenance(Watch(tc.node.Node)); got != tc.may {
				t.Errorf("may be in maintenance: %v, want %v", got, tc.may)
			}
		})
	}
}

// A label signal's selector selects the nodes InMaintenance finds carrying
// it; one that is no label names the field.
func TestLabelSelector(t *testing.T) {
	for _, tc := range []struct {
		label string
		node  Node
		match bool
	}{
		{"example.com/rebooting", node("a", label("example.com/rebooting", "")), true},
		{"example.com/rebooting", node("a"), false},
		{"example.com/rebooting=true", node("a", label("example.com/rebooting", "true")), true},
		{"example.com/rebooting=true", node("a", label("example.com/rebooting", "false")), false},
	} {
		sel, err := LabelSelector(tc.label)
		if err != nil {
			t.Fatal(err)
		}
		signals := Signals{Labels: []string{tc.label}}
		if got, in := sel.Matches(labels.Set(tc.node.Labels)), signals.InMaintenance(tc.node.Node) != ""; got != tc.match || in != tc.match {
			t.Errorf("%s on %v: selected %v, in maintenance %v; want %v", tc.label, tc.node.Labels, got, in, tc.match)
		}
	}
	if _, err := LabelSelector("not a key"); err == nil || !strings.Contains(err.Error(), "spec.maintenance.nodeLabels") {
		t.Errorf("an invalid label: %v, want an error naming spec.maintenance.nodeLabels", err)
	}
}
