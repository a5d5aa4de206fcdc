package plan

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// What MetalLB's speakers and frr-k8s report failing: each a row, each
// finding "Reason Kind/name: part of the message", and when to look again
// with no event.
func TestReportMistakes(t *testing.T) {
	ns := manifests.DefaultNamespace
	router := Peer{Object: configObject(manifests.BGPPeerKind.Kind, ns, "router"), Address: "192.0.2.1", ASN: 64501}
	wired := Advertisement{Object: configObject(manifests.L2AdvertisementKind.Kind, ns, "wired"), Pools: []string{"wired"}, Interfaces: []string{"eth9", "eth10"}}
	plain := Advertisement{Object: configObject(manifests.L2AdvertisementKind.Kind, ns, "l2"), Pools: []string{"wired"}}
	pools := []Pool{{Object: configObject(manifests.IPAddressPoolKind.Kind, ns, "wired"), Addresses: []string{"192.0.2.112/30"}}}
	session := func(node, peer, state string, age time.Duration) Session {
		return Session{Node: node, Peer: peer, State: state, Since: now.Add(-age)}
	}
	failure := func(address string) AnnounceFailure {
		return AnnounceFailure{Service: types.NamespacedName{Namespace: "demo", Name: "web"}, Address: address, Node: "kwok-2",
			Message: fmt.Sprintf(`the interfaces specified by LB IP %q doesn't exist in assigned node "kwok-2" with protocol "layer2"`, address)}
	}
	for _, tc := range []struct {
		name        string
		reports     Reports
		ads         []Advertisement
		want        []string
		wantRecheck time.Duration
	}{
		{"nothing reported", Reports{}, nil, nil, 0},
		{"a session established", Reports{Sessions: []Session{session("kwok-0", "192.0.2.1", "Active", time.Hour), session("kwok-1", "192.0.2.1:179", "Established", time.Hour)}}, nil, nil, 0},
		{"no session established, past the grace", Reports{Sessions: []Session{session("kwok-1", "192.0.2.1", "Connect", time.Minute),
			session("kwok-0", "192.0.2.1", "Active", time.Hour), session("kwok-0", "192.0.2.9", "Established", time.Hour)}}, nil,
			[]string{"PeerUnreachable BGPPeer/router: BGPPeer metallb-system/router (192.0.2.1, ASN 64501) has no established session from any node (kwok-0 Active, kwok-1 Connect): no route reaches the router"}, 0},
		{"no session established, within the grace: look again when it ends", Reports{Sessions: []Session{session("kwok-0", "192.0.2.1", "Active", 10*time.Second),
			session("kwok-1", "192.0.2.1", "Active", 5*time.Second)}}, nil, nil, SessionGrace - 10*time.Second},
		{"sessions with other peers only (the native backend reports none)", Reports{Sessions: []Session{session("kwok-0", "192.0.2.9", "Active", time.Hour)}}, nil, nil, 0},
		{"a Service no node announces, told on the advertisement naming the interfaces", Reports{AnnounceFailures: []AnnounceFailure{failure("192.0.2.113")}},
			[]Advertisement{plain, wired},
			[]string{"InterfaceMissing L2Advertisement/wired: Service demo/web is not announced: node kwok-2, elected to announce 192.0.2.113, has none of the interfaces L2Advertisement metallb-system/wired names (eth9, eth10). Name in the L2Advertisement's spec.interfaces"},
			AnnounceRecheck},
		{"no advertisement with interfaces selects its pool: told on the Service, in MetalLB's words", Reports{AnnounceFailures: []AnnounceFailure{failure("192.0.2.200")}},
			[]Advertisement{plain, wired},
			[]string{`InterfaceMissing Service/web: Service demo/web is not announced: the interfaces specified by LB IP "192.0.2.200" doesn't exist in assigned node "kwok-2" with protocol "layer2". Name in`},
			AnnounceRecheck},
		{"announced now", Reports{AnnounceFailures: []AnnounceFailure{func() AnnounceFailure { f := failure("192.0.2.113"); f.Announced = true; return f }()}}, []Advertisement{wired}, nil, 0},
		{"the Service gone", Reports{AnnounceFailures: []AnnounceFailure{func() AnnounceFailure { f := failure("192.0.2.113"); f.Gone = true; return f }()}}, []Advertisement{wired}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, recheck := reportMistakes(tc.reports, []Peer{router}, tc.ads, pools, now)
			var got []string
			for _, c := range problems {
				got = append(got, fmt.Sprintf("%s %s/%s: %s", c.reason, c.regarding.GetObjectKind().GroupVersionKind().Kind, c.regarding.GetName(), c.message))
			}
			checkList(t, "findings", got, tc.want)
			if recheck != tc.wantRecheck {
				t.Errorf("look again in %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}

// The last announceFailed Event of each Service, with the address and node
// it names; other Events are not failures.
func TestAnnounceFailuresOf(t *testing.T) {
	event := func(reason, kind, name, node string, at time.Duration) corev1.Event {
		return corev1.Event{Reason: reason, InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "demo", Name: name, UID: types.UID(name)},
			LastTimestamp: metav1.NewTime(now.Add(at)),
			Message:       `the interfaces specified by LB IP "192.0.2.113" doesn't exist in assigned node "` + node + `" with protocol "layer2"`}
	}
	got := AnnounceFailuresOf([]corev1.Event{event("announceFailed", "Service", "web", "kwok-2", -time.Minute),
		event("announceFailed", "Service", "db", "kwok-0", -3*time.Minute), event("announceFailed", "Service", "web", "kwok-1", -2*time.Minute),
		event("nodeAssigned", "Service", "api", "kwok-0", 0), event("announceFailed", "Pod", "web", "kwok-0", 0)})
	var out []string
	for _, f := range got {
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Service, f.ServiceUID, f.Address, f.Node))
	}
	checkList(t, "failures", out, []string{"demo/db db 192.0.2.113 kwok-0", "demo/web web 192.0.2.113 kwok-2"})
}

// A Service found unannounced is told as the configuration's mistakes are,
// and the plan looks again while it stands.
func TestPlanTellsReportedFailures(t *testing.T) {
	opts := planOptions()
	cluster := settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}), func(s *Snapshot) {
		s.Reports.AnnounceFailures = []AnnounceFailure{{Service: types.NamespacedName{Namespace: "demo", Name: "web"}, Message: "no eth9"}}
	}))
	p := Make(cluster(t, opts), opts, now)
	checkPlan(t, p, p.Report(nil), planned{version: "A", requeue: AnnounceRecheck,
		events:     []string{"Warning InterfaceMissing Service/web: Service demo/web is not announced: no eth9. Name in the L2Advertisement's spec.interfaces"},
		conditions: []string{"Degraded False AsExpected: MetalLB runs as configured. Service demo/web is not announced", "Available True AsExpected"}})
}
