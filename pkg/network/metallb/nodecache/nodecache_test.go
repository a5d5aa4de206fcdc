package nodecache

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
)

// byValue compares addresses and prefixes by value.
var byValue = cmp.Options{cmp.Comparer(func(a, b netip.Addr) bool { return a == b }), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })}

// Of a Node the cache keeps its name, version, provider ID and what
// maintenance watches, and a kept one again as it is.
func TestKeep(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-0", UID: "u", ResourceVersion: "9",
		Labels: map[string]string{"a": "b"}}, Spec: corev1.NodeSpec{ProviderID: "kwok://kwok-0", Unschedulable: true,
		Taints: []corev1.Taint{{Key: "t", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}, {Type: corev1.NodeHostName, Address: "kwok-0"}}}}
	node.Spec.PodCIDRs = []string{"10.244.0.0/24"}
	kept, err := Keep(node)
	if err != nil {
		t.Fatal(err)
	}
	want := &Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-0", ResourceVersion: "9"}, ProviderID: "kwok://kwok-0",
		Preflight:   plan.NodeFacts{Addresses: []netip.Addr{netip.MustParseAddr("192.0.2.10")}, PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/24")}},
		Maintenance: decide.Watch(node)}
	if diff := cmp.Diff(want, kept, byValue); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if w := kept.(*Node).Maintenance; !w.Unschedulable || len(w.Taints) != 1 || w.Digest == 0 {
		t.Errorf("maintenance's fields: %+v, want the cordon, the taint and the labels' digest", w)
	}
	again, err := Keep(kept)
	if err != nil || again != kept {
		t.Errorf("kept again: %v, %v; want it as it was", again, err)
	}
	cp := kept.(*Node).DeepCopyObject()
	if cmp.Diff(kept, cp, byValue) != "" {
		t.Errorf("a deep copy differs: %s", cmp.Diff(kept, cp, byValue))
	}
	cp.(*Node).Maintenance.Taints[0] = "changed"
	cp.(*Node).Preflight.Addresses[0] = netip.MustParseAddr("192.0.2.99")
	if kept.(*Node).Maintenance.Taints[0] != "t" || kept.(*Node).Preflight.Addresses[0].String() != "192.0.2.10" {
		t.Error("a deep copy shares the taints or the addresses")
	}
}
