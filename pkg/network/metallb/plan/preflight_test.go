package plan

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// What breaks MetalLB silently from outside its configuration: each a row,
// each finding "Reason Kind/name: part of the message"; a healthy cluster
// has none.
func TestPreflightMistakes(t *testing.T) {
	l2 := Advertisement{Object: configObject(manifests.L2AdvertisementKind.Kind, manifests.DefaultNamespace, "l2")}
	bgp := Advertisement{Object: configObject(manifests.BGPAdvertisementKind.Kind, manifests.DefaultNamespace, "bgp")}
	pool := Pool{Object: configObject(manifests.IPAddressPoolKind.Kind, manifests.DefaultNamespace, "pool"), Addresses: []string{"192.0.2.100-192.0.2.110", "2001:db8::/120"}}
	iptables := "kind: KubeProxyConfiguration\nmode: iptables\n"
	healthy := func() Preflight {
		return Preflight{KubeProxyConfig: &iptables, Pools: []Pool{pool}, NodesRead: true,
			Nodes:           []NodeFacts{nodeFacts("kwok-0", "192.0.2.10", false, "10.244.0.0/24"), nodeFacts("kwok-1", "192.0.2.11", true)},
			ServiceNetworks: map[string][]netip.Prefix{"kubernetes": {netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("2001:db8:ffff::/112")}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*Preflight)
		ads    []Advertisement
		want   []string
	}{
		{"a healthy cluster: nothing to tell", nil, []Advertisement{l2, bgp}, nil},
		{"kube-proxy in IPVS mode with strictARP", func(p *Preflight) { p.KubeProxyConfig = kubeProxyIPVS(true) }, []Advertisement{l2}, nil},
		{"kube-proxy in IPVS mode without strictARP", func(p *Preflight) { p.KubeProxyConfig = kubeProxyIPVS(false) }, []Advertisement{bgp, l2},
			[]string{"StrictARPOff L2Advertisement/l2: kube-proxy runs in IPVS mode without strictARP (ConfigMap kube-system/kube-proxy"}},
		{"without strictARP, BGP only: ARP does not matter", func(p *Preflight) { p.KubeProxyConfig = kubeProxyIPVS(false) }, []Advertisement{bgp}, nil},
		{"kube-proxy's configuration unreadable as YAML", func(p *Preflight) { s := "mode: [ipvs"; p.KubeProxyConfig = &s }, []Advertisement{l2}, nil},
		{"a pool holding two nodes' addresses", func(p *Preflight) {
			p.Nodes = append(p.Nodes, nodeFacts("kwok-2", "192.0.2.105", false), nodeFacts("kwok-3", "2001:db8::7", false))
		}, []Advertisement{l2}, []string{"PoolHoldsNodeAddress IPAddressPool/pool: IPAddressPool metallb-system/pool holds 192.0.2.105 of node kwok-2, 2001:db8::7 of node kwok-3"}},
		{"a pool overlapping the Service network", func(p *Preflight) { p.ServiceNetworks["kubernetes"][0] = netip.MustParsePrefix("192.0.2.96/28") },
			[]Advertisement{l2}, []string{"PoolOverlapsServiceNetwork IPAddressPool/pool: IPAddressPool metallb-system/pool overlaps the cluster's Service network 192.0.2.96/28 (ServiceCIDR kubernetes)"}},
		{"a pool overlapping a node's pod network", func(p *Preflight) { p.Nodes[0].PodCIDRs = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")} },
			[]Advertisement{l2}, []string{"PoolOverlapsPodNetwork IPAddressPool/pool: IPAddressPool metallb-system/pool overlaps the pod network (192.0.2.0/24 of node kwok-0"}},
		{"a pool overlapping OpenShift's cluster network", func(p *Preflight) {
			p.ClusterNetworks = []netip.Prefix{netip.MustParsePrefix("10.128.0.0/14"), netip.MustParsePrefix("192.0.2.0/25")}
		}, []Advertisement{l2}, []string{"PoolOverlapsPodNetwork IPAddressPool/pool: IPAddressPool metallb-system/pool overlaps the pod network 192.0.2.0/25 (Network.operator.openshift.io cluster, spec.clusterNetwork)"}},
		{"OpenShift's cluster network clear of the pools", func(p *Preflight) { p.ClusterNetworks = []netip.Prefix{netip.MustParsePrefix("10.128.0.0/14")} },
			[]Advertisement{l2}, nil},
		{"every node excluded", func(p *Preflight) { p.Nodes[0].Excluded = true }, []Advertisement{bgp, l2},
			[]string{"AllNodesExcluded BGPAdvertisement/bgp: Every node (2) carries the label node.kubernetes.io/exclude-from-external-load-balancers"}},
		{"every node excluded, no advertisement: nothing is announced anyway", func(p *Preflight) { p.Nodes[0].Excluded = true }, nil, nil},
		{"the nodes unread (a view user): no check of nodes", func(p *Preflight) {
			p.Nodes[0].Excluded, p.NodesRead, p.Nodes = true, false, nil
		}, []Advertisement{l2}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := healthy()
			if tc.change != nil {
				tc.change(&p)
			}
			var got []string
			for _, c := range preflightMistakes(p, tc.ads) {
				got = append(got, fmt.Sprintf("%s %s/%s: %s", c.reason, c.regarding.GetObjectKind().GroupVersionKind().Kind, c.regarding.GetName(), c.message))
			}
			checkList(t, "findings", got, tc.want)
		})
	}
}

func kubeProxyIPVS(strict bool) *string {
	s := fmt.Sprintf("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nipvs:\n  strictARP: %t\n", strict)
	return &s
}

func nodeFacts(name, address string, excluded bool, podCIDR ...string) NodeFacts {
	n := NodeFacts{Name: name, Excluded: excluded, Addresses: []netip.Addr{netip.MustParseAddr(address)}}
	for _, c := range podCIDR {
		n.PodCIDRs = append(n.PodCIDRs, netip.MustParsePrefix(c))
	}
	return n
}

// A finding from outside the configuration is told as a mistake in it: an
// Event on its object and the status's message, never Degraded.
func TestPlanTellsPreflightFindings(t *testing.T) {
	opts := planOptions()
	cluster := settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}), func(s *Snapshot) {
		s.Advertisements = []Advertisement{{Object: configObject(manifests.L2AdvertisementKind.Kind, manifests.DefaultNamespace, "l2")}}
		s.Preflight = Preflight{NodesRead: true, Nodes: []NodeFacts{{Name: "kwok-0", Excluded: true}}}
	}))
	p := Make(cluster(t, opts), opts, now)
	checkPlan(t, p, p.Report(nil), planned{version: "A",
		events: []string{"Warning AllNodesExcluded L2Advertisement/l2: Every node (1) carries the label node.kubernetes.io/exclude-from-external-load-balancers"},
		conditions: []string{"Degraded False AsExpected: MetalLB runs as configured. Every node (1) carries the label",
			"Available True AsExpected"}})
}

func TestNodeFactsEqual(t *testing.T) {
	a := NodeFacts{Name: "kwok-0", Addresses: []netip.Addr{netip.MustParseAddr("192.0.2.10")}}
	for _, tc := range []struct {
		name  string
		other func(NodeFacts) NodeFacts
		equal bool
	}{
		{"the same, another slice", func(f NodeFacts) NodeFacts { f.Addresses = slices.Clone(f.Addresses); return f }, true},
		{"excluded", func(f NodeFacts) NodeFacts { f.Excluded = true; return f }, false},
		{"another address", func(f NodeFacts) NodeFacts { f.Addresses = []netip.Addr{netip.MustParseAddr("192.0.2.11")}; return f }, false},
		{"a pod network", func(f NodeFacts) NodeFacts {
			f.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/24")}
			return f
		}, false},
	} {
		if got := a.Equal(tc.other(a)); got != tc.equal {
			t.Errorf("%s: Equal %v, want %v", tc.name, got, tc.equal)
		}
	}
}
