package explain

import (
	"reflect"
	"testing"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestStatusReport(t *testing.T) {
	c := healthy()
	c.Controller = nil
	c.Nodes[1].Labels[corev1.LabelNodeExcludeBalancers] = ""
	c.Speakers = c.Speakers[:2]
	c.Speakers[0].Status.Conditions = nil
	c.Pools[0].Status = metallbv1beta1.IPAddressPoolStatus{AssignedIPv4: 2, AvailableIPv4: 9}
	c.BGPAds = []metallbv1beta1.BGPAdvertisement{{ObjectMeta: metav1.ObjectMeta{Name: "bgp"},
		Spec: metallbv1beta1.BGPAdvertisementSpec{IPAddressPools: []string{"gold"}, NodeSelectors: []metav1.LabelSelector{selector("name", "node-c")}}}}
	c.Peers = append(c.Peers, peer("router"))
	sessions := []SessionReport{{Node: "node-a", Peer: "198.51.100.1", BGP: "Established"}, {Node: "node-a", Peer: "198.51.100.2", BGP: "Active"}}
	r := Status(c, sessions, nil)

	if r.Controller != "missing" {
		t.Errorf("controller %q, want missing", r.Controller)
	}
	wantSpeakers := []SpeakerReport{{Node: "node-a"}, {Node: "node-b", Ready: true, Excluded: true}, {Node: "node-c"}}
	if !reflect.DeepEqual(r.Speakers, wantSpeakers) {
		t.Errorf("speakers %+v, want %+v", r.Speakers, wantSpeakers)
	}
	if p := r.Pools[0]; p.UsedIPv4 != 2 || p.FreeIPv4 != 9 || !p.AutoAssign {
		t.Errorf("pool %+v", p)
	}
	wantAds := []AdvertisementReport{
		{Kind: "L2Advertisement", Name: "l2", Pools: []string{"default"}, Nodes: []string{"all"}},
		{Kind: "BGPAdvertisement", Name: "bgp", Nodes: []string{"node-c"}},
	}
	if !reflect.DeepEqual(r.Advertisements, wantAds) {
		t.Errorf("advertisements %+v, want %+v", r.Advertisements, wantAds)
	}
	if got := r.Peers[0].Sessions; !reflect.DeepEqual(got, sessions[:1]) {
		t.Errorf("the peer's sessions %+v, want only its own", got)
	}
	c.Unreadable = []Unread{{What: KindNodes, Reason: "forbidden"}}
	c.Nodes = nil
	if got := Status(c, nil, nil).Advertisements[1].Nodes; !reflect.DeepEqual(got, []string{"?"}) {
		t.Errorf("with the nodes unread, the nodes of a selector are %v, want ?", got)
	}
}

// Whether a node announces a Service in layer 2 is what MetalLB's
// ServiceL2Statuses say.
func TestAnnouncesInLayer2(t *testing.T) {
	c := healthy()
	c.L2Statuses = []metallbv1beta1.ServiceL2Status{{Status: metallbv1beta1.MetalLBServiceL2Status{Node: "node-a", ServiceName: "db", ServiceNamespace: "demo"}}}
	if !c.AnnouncesInLayer2(types.NamespacedName{Namespace: "demo", Name: "db"}) || c.AnnouncesInLayer2(types.NamespacedName{Namespace: "demo", Name: "web"}) {
		t.Error("demo/db is announced and demo/web is not")
	}
	c.Services = []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db", UID: "1"}}}
	db := types.NamespacedName{Namespace: "demo", Name: "db"}
	if !c.HasService(db, "1") || !c.HasService(db, "") || c.HasService(db, "2") || c.HasService(types.NamespacedName{Namespace: "demo", Name: "web"}, "") {
		t.Error("demo/db of UID 1 exists, and no other")
	}
	c.Unreadable = []Unread{{What: KindServices, Reason: "forbidden"}}
	if !c.HasService(types.NamespacedName{Namespace: "demo", Name: "web"}, "") {
		t.Error("with the Services unread, every Service is taken to exist")
	}
}
