package noderunner

import (
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

// TestNeighborProber asks from the client who has addresses of either family:
// a node's kernel answers ARP and NDP for its own addresses, the ones it has
// from the network and one added on its eth0.
func TestNeighborProber(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: the test network is made of network namespaces, which needs root (CI runs as root)")
	}
	n, err := NewNetwork(map[string]string{"a": "192.0.2.10", "b": "192.0.2.11"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	a, b := n.Node("a"), n.Node("b")
	if !a.IP6.Equal(net.ParseIP("2001:db8::10")) || !n.Client.IP6.Equal(net.ParseIP(ClientAddress6)) {
		t.Fatalf("IPv6 addresses %v (node a) and %v (client), want 2001:db8::10 and %s", a.IP6, n.Client.IP6, ClientAddress6)
	}
	for _, cmd := range [][]string{
		{"-n", b.Netns, "addr", "add", "2001:db8::100/128", "dev", "eth0", "nodad"},
		// An address both nodes have, so that both answer.
		{"-n", a.Netns, "addr", "add", "2001:db8::101/128", "dev", "eth0", "nodad"},
		{"-n", b.Netns, "addr", "add", "2001:db8::101/128", "dev", "eth0", "nodad"},
	} {
		if err := ip(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewNeighborProber(n.Client)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		ip   string
		want net.HardwareAddr
	}{
		{"2001:db8::100", b.MAC},
		{"2001:db8::10", a.MAC},
		{"192.0.2.11", b.MAC},
		{"2001:db8::200", nil},
		{"192.0.2.200", nil},
	} {
		got, err := p.Probe(net.ParseIP(tc.ip), time.Second)
		if err != nil || got.String() != tc.want.String() {
			t.Errorf("who has %s: %v (%v), want %v", tc.ip, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ip   string
		want []net.HardwareAddr
	}{
		{"2001:db8::100", []net.HardwareAddr{b.MAC}},
		{"2001:db8::101", []net.HardwareAddr{a.MAC, b.MAC}},
		{"192.0.2.10", []net.HardwareAddr{a.MAC}},
	} {
		got, err := p.Answers(net.ParseIP(tc.ip), 500*time.Millisecond)
		if err != nil || !slices.Equal(macStrings(got), macStrings(tc.want)) {
			t.Errorf("answers for %s: %v (%v), want %v", tc.ip, got, err, tc.want)
		}
	}
}

func macStrings(macs []net.HardwareAddr) []string {
	s := make([]string, len(macs))
	for i, m := range macs {
		s[i] = m.String()
	}
	slices.Sort(s)
	return s
}
