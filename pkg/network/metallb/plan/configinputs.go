package plan

import (
	"net/netip"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// What the configuration checks read of MetalLB's objects, made from them
// once for the operator's snapshot and for kubectl metallb alike.

// MetadataOf is an object's identity and labels, of a kind, for the Events
// on it: typed objects from a cache do not know their kind.
func MetadataOf(o objects.Object, gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName(),
		UID: o.GetUID(), Labels: o.GetLabels()}}
	m.SetGroupVersionKind(gvk)
	return m
}

// AdvertisementsOf are the advertisements by what they select.
func AdvertisementsOf(bgp []metallbv1beta1.BGPAdvertisement, l2 []metallbv1beta1.L2Advertisement) []Advertisement {
	var out []Advertisement
	for i := range bgp {
		a := &bgp[i]
		out = append(out, Advertisement{Object: MetadataOf(a, manifests.BGPAdvertisementKind),
			Pools: a.Spec.IPAddressPools, PoolSelectors: a.Spec.IPAddressPoolSelectors, Peers: a.Spec.Peers, NodeSelectors: a.Spec.NodeSelectors})
	}
	for i := range l2 {
		a := &l2[i]
		out = append(out, Advertisement{Object: MetadataOf(a, manifests.L2AdvertisementKind),
			Pools: a.Spec.IPAddressPools, PoolSelectors: a.Spec.IPAddressPoolSelectors, NodeSelectors: a.Spec.NodeSelectors,
			Interfaces: a.Spec.Interfaces})
	}
	return out
}

// PeersOf are the BGPPeers by what the checks read.
func PeersOf(peers []metallbv1beta2.BGPPeer) []Peer {
	out := make([]Peer, len(peers))
	for i := range peers {
		p := &peers[i]
		out[i] = Peer{Object: MetadataOf(p, manifests.BGPPeerKind), Address: p.Spec.Address, ASN: p.Spec.ASN, HoldTime: p.Spec.HoldTime,
			NodeSelectors: p.Spec.NodeSelectors}
	}
	return out
}

// ConfigStatesOf are MetalLB's components' reports.
func ConfigStatesOf(states []metallbv1beta1.ConfigurationState) []ConfigState {
	out := make([]ConfigState, len(states))
	for i := range states {
		c := &states[i]
		out[i] = ConfigState{Object: MetadataOf(c, manifests.ConfigurationStateKind),
			Component: c.Labels[manifests.ConfigurationComponentLabel], Node: c.Labels[manifests.ConfigurationNodeLabel],
			Result: string(c.Status.Result), ErrorSummary: c.Status.ErrorSummary}
	}
	return out
}

// PoolsOf are the IPAddressPools by their addresses.
func PoolsOf(pools []metallbv1beta1.IPAddressPool) []Pool {
	out := make([]Pool, len(pools))
	for i := range pools {
		out[i] = Pool{Object: MetadataOf(&pools[i], manifests.IPAddressPoolKind), Addresses: pools[i].Spec.Addresses}
	}
	return out
}

// NodeFactsOf is what the checks read of a node: whether it is excluded
// from load balancers, its InternalIP and ExternalIP addresses, and its pod
// networks.
func NodeFactsOf(n *corev1.Node) NodeFacts {
	f := NodeFacts{Name: n.Name}
	_, f.Excluded = n.Labels[corev1.LabelNodeExcludeBalancers]
	for _, a := range n.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); err == nil && (a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP) {
			f.Addresses = append(f.Addresses, ip)
		}
	}
	for _, c := range n.Spec.PodCIDRs {
		if p, err := netip.ParsePrefix(c); err == nil {
			f.PodCIDRs = append(f.PodCIDRs, p)
		}
	}
	return f
}

// ServiceNetworksOf are the cluster's Service networks, by ServiceCIDR.
func ServiceNetworksOf(cidrs []networkingv1.ServiceCIDR) map[string][]netip.Prefix {
	out := map[string][]netip.Prefix{}
	for _, c := range cidrs {
		for _, s := range c.Spec.CIDRs {
			if p, err := netip.ParsePrefix(s); err == nil {
				out[c.Name] = append(out[c.Name], p)
			}
		}
	}
	return out
}

// ClusterNetworksOf are the pod networks OpenShift's Network object names
// (spec.clusterNetwork[].cidr).
func ClusterNetworksOf(network *unstructured.Unstructured) []netip.Prefix {
	entries, _, _ := unstructured.NestedSlice(network.Object, "spec", "clusterNetwork")
	var out []netip.Prefix
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		cidr, _, _ := unstructured.NestedString(entry, "cidr")
		if p, err := netip.ParsePrefix(cidr); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// SessionsOf are frr-k8s's BGPSessionStates as sessions.
func SessionsOf(states []unstructured.Unstructured) []Session {
	out := make([]Session, len(states))
	for i := range states {
		field := func(name string) string {
			v, _, _ := unstructured.NestedString(states[i].Object, "status", name)
			return v
		}
		out[i] = Session{Node: field("node"), Peer: field("peer"), State: field("bgpStatus"), Since: states[i].GetCreationTimestamp().Time}
	}
	return out
}
