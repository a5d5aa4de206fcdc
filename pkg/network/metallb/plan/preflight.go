package plan

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// Reasons of what breaks MetalLB silently from outside its configuration:
// told as its mistakes are, never Degraded.
const (
	ReasonStrictARPOff               = "StrictARPOff"
	ReasonPoolHoldsNodeAddress       = "PoolHoldsNodeAddress"
	ReasonPoolOverlapsServiceNetwork = "PoolOverlapsServiceNetwork"
	ReasonPoolOverlapsPodNetwork     = "PoolOverlapsPodNetwork"
	ReasonAllNodesExcluded           = "AllNodesExcluded"
)

// Preflight is what the checks beyond MetalLB's objects read.
type Preflight struct {
	// KubeProxyConfig is kube-proxy's configuration (config.conf of the
	// ConfigMap kube-system/kube-proxy), nil where there is none.
	KubeProxyConfig *string
	// Pools are the IPAddressPools by their addresses.
	Pools []Pool
	// Nodes are what the checks read of each node; NodesRead is false
	// where they could not be read (kubectl metallb as a user bound to
	// view), and the checks of nodes are left out.
	Nodes     []NodeFacts
	NodesRead bool
	// ServiceNetworks are the cluster's Service networks (its
	// ServiceCIDRs), by name.
	ServiceNetworks map[string][]netip.Prefix
	// ClusterNetworks are the pod networks of OpenShift's Network object
	// (spec.clusterNetwork), whose nodes have no spec.podCIDRs.
	ClusterNetworks []netip.Prefix
}

// Pool is an IPAddressPool by its spec.addresses.
type Pool struct {
	Object    *metav1.PartialObjectMetadata
	Addresses []string
}

// NodeFacts are what the checks read of a node.
type NodeFacts struct {
	Name string
	// Excluded tells it carries corev1.LabelNodeExcludeBalancers.
	Excluded  bool
	Addresses []netip.Addr
	PodCIDRs  []netip.Prefix
}

// Equal tells whether two nodes' facts are the same: the Node handler asks
// it of every Node update, most of them status heartbeats.
func (f NodeFacts) Equal(o NodeFacts) bool {
	return f.Name == o.Name && f.Excluded == o.Excluded && slices.Equal(f.Addresses, o.Addresses) && slices.Equal(f.PodCIDRs, o.PodCIDRs)
}

// preflightMistakes are what breaks MetalLB silently from outside its
// configuration: kube-proxy answering ARP for every address, pools holding
// the nodes' own addresses or the cluster's networks, every node excluded.
func preflightMistakes(p Preflight, ads []Advertisement) []problem {
	out := strictARP(p.KubeProxyConfig, ads)
	for _, pool := range p.Pools {
		out = append(out, poolOverlaps(pool, p)...)
	}
	if p.NodesRead && len(p.Nodes) > 0 && len(ads) > 0 && !slices.ContainsFunc(p.Nodes, func(n NodeFacts) bool { return !n.Excluded }) {
		out = append(out, problem{regarding: ads[0].Object, reason: ReasonAllNodesExcluded, message: fmt.Sprintf(
			"Every node (%d) carries the label %s: MetalLB's speakers announce no address. Take the label off the nodes that "+
				"should announce: kubectl label node NAME %s-", len(p.Nodes), corev1.LabelNodeExcludeBalancers, corev1.LabelNodeExcludeBalancers)})
	}
	return out
}

// kubeProxyConfiguration is what the check reads of kube-proxy's
// configuration (kubeproxy.config.k8s.io KubeProxyConfiguration).
type kubeProxyConfiguration struct {
	Mode string `json:"mode"`
	IPVS struct {
		StrictARP bool `json:"strictARP"`
	} `json:"ipvs"`
}

// strictARP tells kube-proxy in IPVS mode without strictARP, where an
// L2Advertisement exists: kube-proxy puts every Service address on every
// node's kube-ipvs0, and without strictARP each node answers ARP for
// MetalLB's addresses.
func strictARP(config *string, ads []Advertisement) []problem {
	i := slices.IndexFunc(ads, func(a Advertisement) bool { return a.Object.Kind == manifests.L2AdvertisementKind.Kind })
	if config == nil || i < 0 {
		return nil
	}
	var c kubeProxyConfiguration
	if yaml.Unmarshal([]byte(*config), &c) != nil || !strings.EqualFold(c.Mode, "ipvs") || c.IPVS.StrictARP {
		return nil
	}
	return []problem{{regarding: ads[i].Object, reason: ReasonStrictARPOff, message: fmt.Sprintf(
		"kube-proxy runs in IPVS mode without strictARP (ConfigMap %s/kube-proxy, config.conf): every node answers ARP for the "+
			"addresses MetalLB announces in layer 2, and clients reach whichever node answered last. Set ipvs.strictARP: true in "+
			"that ConfigMap and restart kube-proxy", metav1.NamespaceSystem)}}
}

// poolOverlaps tells a pool holding a node's address, the Service network
// or a node's pod network.
func poolOverlaps(pool Pool, p Preflight) []problem {
	ranges := explain.RangesOf(pool.Addresses)
	holds := func(r explain.Range) bool { return slices.ContainsFunc(ranges, r.Overlaps) }
	name := pool.Object.Namespace + "/" + pool.Object.Name
	var out []problem
	var nodes []string
	for _, n := range p.Nodes {
		for _, a := range n.Addresses {
			if holds(explain.PrefixRange(netip.PrefixFrom(a, a.BitLen()))) {
				nodes = append(nodes, fmt.Sprintf("%s of node %s", a, n.Name))
			}
		}
	}
	if len(nodes) > 0 {
		out = append(out, problem{regarding: pool.Object, reason: ReasonPoolHoldsNodeAddress, message: fmt.Sprintf(
			"IPAddressPool %s holds %s: MetalLB would hand it to a Service and announce it in the node's place. Take the "+
				"nodes' addresses out of its spec.addresses", name, explain.FirstOf(nodes, 3))})
	}
	for _, cidr := range sortedKeys(p.ServiceNetworks) {
		for _, net := range p.ServiceNetworks[cidr] {
			if holds(explain.PrefixRange(net)) {
				out = append(out, problem{regarding: pool.Object, reason: ReasonPoolOverlapsServiceNetwork, message: fmt.Sprintf(
					"IPAddressPool %s overlaps the cluster's Service network %s (ServiceCIDR %s): its addresses collide with "+
						"ClusterIPs. Give the pool addresses outside it", name, net, cidr)})
			}
		}
	}
	return append(out, podNetworkOverlap(pool, p, holds)...)
}

// podNetworkOverlap tells a pool overlapping the cluster's pod networks, or
// where it names none, the nodes'.
func podNetworkOverlap(pool Pool, p Preflight, holds func(explain.Range) bool) []problem {
	var hit []string
	for _, c := range p.ClusterNetworks {
		if holds(explain.PrefixRange(c)) {
			hit = append(hit, c.String())
		}
	}
	if len(hit) > 0 {
		return []problem{{regarding: pool.Object, reason: ReasonPoolOverlapsPodNetwork, message: fmt.Sprintf(
			"IPAddressPool %s/%s overlaps the pod network %s (Network.operator.openshift.io cluster, spec.clusterNetwork): its "+
				"addresses collide with pods'. Give the pool addresses outside it", pool.Object.Namespace, pool.Object.Name, strings.Join(hit, ", "))}}
	}
	for _, n := range p.Nodes {
		for _, c := range n.PodCIDRs {
			if holds(explain.PrefixRange(c)) {
				hit = append(hit, fmt.Sprintf("%s of node %s", c, n.Name))
			}
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return []problem{{regarding: pool.Object, reason: ReasonPoolOverlapsPodNetwork, message: fmt.Sprintf(
		"IPAddressPool %s/%s overlaps the pod network (%s, spec.podCIDRs): its addresses collide with pods'. Give the pool "+
			"addresses outside it", pool.Object.Namespace, pool.Object.Name, explain.FirstOf(hit, 3))}}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
