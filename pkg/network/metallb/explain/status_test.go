package explain

import (
	"reflect"
	"strings"
	"testing"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if len(r.Findings) != 0 {
		t.Errorf("with a session established, findings %+v, want none", r.Findings)
	}
	down := Status(c, []SessionReport{{Node: "node-a", Peer: "198.51.100.1", BGP: "Active"}, {Node: "node-b", Peer: "198.51.100.1", BGP: "Connect"}}, nil)
	if len(down.Findings) != 1 || down.Findings[0].Reason != ReasonPeerUnreachable ||
		!strings.Contains(down.Findings[0].Message, "BGPPeer metallb-system/router (198.51.100.1, ASN 64500) has no established session from any node (node-a Active, node-b Connect)") {
		t.Errorf("with no session established, findings %+v, want the peer unreachable", down.Findings)
	}
	c.Unreadable = []Unread{{What: KindNodes, Reason: "forbidden"}}
	c.Nodes = nil
	if got := Status(c, nil, nil).Advertisements[1].Nodes; !reflect.DeepEqual(got, []string{"?"}) {
		t.Errorf("with the nodes unread, the nodes of a selector are %v, want ?", got)
	}
}

// A Service MetalLB could not announce on the interfaces an L2Advertisement
// names is a finding while no node announces it, once per Service.
func TestInterfaceFindings(t *testing.T) {
	c := healthy()
	failed := func(name, node string) corev1.Event {
		e := warning(ReasonAnnounceFailed, `the interfaces specified by LB IP "192.0.2.10" doesn't exist in assigned node "`+node+`" with protocol "layer2"`)
		e.InvolvedObject = corev1.ObjectReference{Kind: "Service", Namespace: "demo", Name: name}
		return e
	}
	events := []corev1.Event{failed("web", "node-a"), failed("web", "node-b"), failed("db", "node-c")}
	c.L2Statuses = []metallbv1beta1.ServiceL2Status{{Status: metallbv1beta1.MetalLBServiceL2Status{Node: "node-a", ServiceName: "db", ServiceNamespace: "demo"}}}
	got := InterfaceFindings(c, events)
	if len(got) != 1 || got[0].Regarding != "Service demo/web" || !strings.Contains(got[0].Message, `assigned node "node-b"`) {
		t.Errorf("findings %+v, want one for demo/web, its last Event's words (db is announced)", got)
	}
}
