package decide

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

func TestEligible(t *testing.T) {
	excluded := node("c-excluded", true, internal("192.0.2.13"))
	excluded.Labels = map[string]string{corev1.LabelNodeExcludeBalancers: ""}
	deleting := node("d-deleting", true, internal("192.0.2.14"))
	deleting.DeletionTimestamp = &metav1.Time{Time: epoch}
	nodes := []*corev1.Node{
		node("b-dual", true, internal("192.0.2.12"), internal("2001:db8::12")),
		node("a-external", true, internal("192.0.2.11"), external("203.0.113.11")),
		excluded, deleting,
		node("e-not-ready", false, internal("192.0.2.15")),
		node("f-no-address", true),
	}
	for _, tc := range []struct {
		addressType v1beta1.NodeAddressType
		want        []Node
	}{
		{"", []Node{{"a-external", addrs("203.0.113.11")}, {"b-dual", addrs("192.0.2.12", "2001:db8::12")}}},
		{v1beta1.NodeInternalIP, []Node{{"a-external", addrs("192.0.2.11")}, {"b-dual", addrs("192.0.2.12", "2001:db8::12")}}},
		{v1beta1.NodeExternalIP, []Node{{"a-external", addrs("203.0.113.11")}}},
	} {
		t.Run(string(tc.addressType), func(t *testing.T) {
			if d := cmp.Diff(tc.want, Eligible(nodes, tc.addressType), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
				t.Errorf("Eligible (-want +got):\n%s", d)
			}
		})
	}
}

func TestPublished(t *testing.T) {
	dual := []Node{{"n1", addrs("192.0.2.11", "2001:db8::11")}, {"n2", addrs("192.0.2.12", "2001:db8::12")}}
	for _, tc := range []struct {
		name      string
		svc       *corev1.Service
		endpoints map[string]bool
		want      []netip.Addr
	}{
		{"IPv4 only", lb("a"), nil, addrs("192.0.2.11", "192.0.2.12")},
		{"dual-stack, IPv6 first: one entry per address, by family", lb("a", withFamilies(corev1.IPv6Protocol, corev1.IPv4Protocol)), nil,
			addrs("2001:db8::11", "2001:db8::12", "192.0.2.11", "192.0.2.12")},
		{"Local: the nodes with an endpoint", lb("a", localPolicy), map[string]bool{"n2": true}, addrs("192.0.2.12")},
		{"Local, no endpoint: nothing", lb("a", localPolicy), map[string]bool{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Published(tc.svc, dual, tc.endpoints); !slices.Equal(got, tc.want) {
				t.Errorf("Published = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPublishedAtMostMaxNodes: on a large cluster each Service publishes
// MaxNodes nodes, a run of its own, and two Services' runs differ.
func TestPublishedAtMostMaxNodes(t *testing.T) {
	var nodes []Node
	for i := range 100 {
		nodes = append(nodes, Node{fmt.Sprintf("n%03d", i), addrs(fmt.Sprintf("198.51.100.%d", i+1))})
	}
	a, b := Published(lb("a"), nodes, nil), Published(lb("b"), nodes, nil)
	if len(a) != MaxNodes || len(b) != MaxNodes {
		t.Fatalf("published %d and %d addresses, want %d each", len(a), len(b), MaxNodes)
	}
	if slices.Equal(a, b) {
		t.Errorf("two Services publish the same nodes %v: they do not spread", a)
	}
	if again := Published(lb("a"), nodes, nil); !slices.Equal(a, again) {
		t.Errorf("a Service's nodes change between calls: %v, then %v", a, again)
	}
}

func TestDecide(t *testing.T) {
	first := lb("first")
	second := lb("second", createdAt(1))
	sameSecond := lb("same-second") // created with first: the UIDs order them
	udp := lb("udp", createdAt(1), withPorts(corev1.ServicePort{Protocol: corev1.ProtocolUDP, Port: 80}))
	winner := types.NamespacedName{Namespace: "default", Name: "first"}
	tcp80 := []Port{{corev1.ProtocolTCP, 80}}
	both := addrs("192.0.2.11", "192.0.2.12")
	for _, tc := range []struct {
		name   string
		svc    *corev1.Service
		wanted []netip.Addr
		rivals []Rival
		want   Decision
	}{
		{"no rival", second, both, nil, Decision{Addresses: both}},
		{"older rival on one node: that node lost", second, both, []Rival{{first, addrs("192.0.2.12")}},
			Decision{Addresses: addrs("192.0.2.11"), Losses: []Loss{{addrs("192.0.2.12")[0], tcp80, winner}}}},
		{"younger rival: nothing lost", first, both, []Rival{{second, both}}, Decision{Addresses: both}},
		{"same second: the lesser UID wins", sameSecond, both, []Rival{{first, both}},
			Decision{Losses: []Loss{{both[0], tcp80, winner}, {both[1], tcp80, winner}}}},
		{"another protocol: no conflict", udp, both, []Rival{{first, both}}, Decision{Addresses: both}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Addresses(tc.svc, tc.wanted, tc.rivals), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
}

func TestIngress(t *testing.T) {
	d := Decision{Addresses: addrs("192.0.2.11", "2001:db8::11"),
		Losses: []Loss{{addrs("192.0.2.12")[0], []Port{{corev1.ProtocolTCP, 80}}, types.NamespacedName{Name: "first"}}}}
	got := Ingress(d)
	vip := corev1.LoadBalancerIPModeVIP
	want := []corev1.LoadBalancerIngress{
		{IP: "192.0.2.11", IPMode: &vip},
		{IP: "2001:db8::11", IPMode: &vip},
		{Ports: []corev1.PortStatus{{Port: 80, Protocol: corev1.ProtocolTCP, Error: new(PortTaken)}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Ingress (-want +got):\n%s", d)
	}
	if Digest(got) == Digest(got[:2]) {
		t.Error("the digest does not tell the losses apart")
	}
	if Ingress(Decision{}) != nil {
		t.Error("no address and no loss must be no ingress, so that applying it removes what the mode wrote")
	}
}

func TestNextWrite(t *testing.T) {
	ingress := Ingress(Decision{Addresses: addrs("192.0.2.11")})
	written := func(digest string) func(*corev1.Service) {
		return func(s *corev1.Service) { s.GenerateName = writtenMark + digest }
	}
	byOther := func(s *corev1.Service) { MarkWriter(s, "kube-vip") }
	for _, tc := range []struct {
		name    string
		svc     *corev1.Service
		ingress []corev1.LoadBalancerIngress
		write   bool
		writer  string
	}{
		{"new addresses", lb("a"), ingress, true, ""},
		{"written already", lb("a", written(Digest(ingress))), ingress, false, ""},
		{"written, changed", lb("a", written("0")), ingress, true, ""},
		{"written, now none: removed", lb("a", written(Digest(ingress))), nil, true, ""},
		{"never written, none", lb("a"), nil, false, ""},
		{"no class, another controller's addresses: left to it", lb("a", byOther), ingress, false, "kube-vip"},
		{"the class, another controller's addresses: the mode's", lb("a", withClass(Class), byOther), ingress, true, ""},
		{"another controller's, none wanted: nothing said", lb("a", byOther), nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write, writer := NextWrite(tc.svc, tc.ingress)
			if write != tc.write || writer != tc.writer {
				t.Errorf("nextWrite = %v, %q; want %v, %q", write, writer, tc.write, tc.writer)
			}
		})
	}
}

// An address is lost only to a Service that holds it: one that lost it to an
// older Service in turn does not take it from a younger one.
func TestDecideAmong(t *testing.T) {
	http := corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 80}
	https := corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 443}
	a := addrs("192.0.2.11")
	oldest := lb("oldest", withPorts(http))
	middle := lb("middle", createdAt(1), withPorts(http, https))
	for _, tc := range []struct {
		name   string
		svc    *corev1.Service
		rivals []Rival
		want   Decision
	}{
		{"the middle one lost the address to the oldest: the youngest keeps it on 443",
			lb("youngest", createdAt(2), withPorts(https)), []Rival{{oldest, a}, {middle, a}}, Decision{Addresses: a}},
		{"the middle one holds it: the youngest loses it on 443, to the middle one",
			lb("youngest", createdAt(2), withPorts(https)), []Rival{{middle, a}},
			Decision{Losses: []Loss{{a[0], []Port{{corev1.ProtocolTCP, 443}}, types.NamespacedName{Namespace: "default", Name: "middle"}}}}},
		{"on 80, the youngest loses it to the oldest, who holds it",
			lb("youngest", createdAt(2), withPorts(http)), []Rival{{oldest, a}, {middle, a}},
			Decision{Losses: []Loss{{a[0], []Port{{corev1.ProtocolTCP, 80}}, types.NamespacedName{Namespace: "default", Name: "oldest"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, AddressesAmong(tc.svc, a, tc.rivals), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
				t.Errorf("DecideAmong (-want +got):\n%s", d)
			}
		})
	}
}
