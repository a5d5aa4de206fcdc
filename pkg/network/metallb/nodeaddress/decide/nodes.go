package decide

import (
	"hash/fnv"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// MaxNodes is how many nodes' addresses one Service publishes at most. Every
// node can take the traffic of a Cluster-policy Service, but a client uses one
// address: a status listing every node of a large cluster would cost the API
// server and every watcher of Services for nothing. Each Service takes its own
// run of nodes (nodesFor), so that Services spread over the cluster.
const MaxNodes = 16

// Node is a node that can take traffic, and the addresses it publishes.
type Node struct {
	Name      string
	Addresses []netip.Addr
}

// Eligible returns, sorted by name, the nodes that can take traffic: Ready,
// not being deleted and not labelled corev1.LabelNodeExcludeBalancers, with
// their addresses of the type asked.
func Eligible(nodes []*corev1.Node, addressType v1beta1.NodeAddressType) []Node {
	var out []Node
	for _, n := range nodes {
		if !status.NodeReady(n) || n.DeletionTimestamp != nil {
			continue
		}
		if _, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]; excluded {
			continue
		}
		if addrs := addressesOf(n, addressType); len(addrs) > 0 {
			out = append(out, Node{Name: n.Name, Addresses: addrs})
		}
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// addressesOf returns a node's addresses of the type asked; with none asked,
// its ExternalIP addresses, or its InternalIP ones if it has no ExternalIP.
func addressesOf(n *corev1.Node, addressType v1beta1.NodeAddressType) []netip.Addr {
	if addressType != "" {
		return addressesOfType(n, corev1.NodeAddressType(addressType))
	}
	if addrs := addressesOfType(n, corev1.NodeExternalIP); len(addrs) > 0 {
		return addrs
	}
	return addressesOfType(n, corev1.NodeInternalIP)
}

func addressesOfType(n *corev1.Node, t corev1.NodeAddressType) []netip.Addr {
	var out []netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type != t {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && !slices.Contains(out, ip.Unmap()) {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// nodesFor returns the nodes a Service publishes: of the eligible ones (by
// name), those where it has a ready endpoint when its policy is Local
// (endpointNodes), and of those at most MaxNodes, a run that starts at a
// place of the Service's own (its UID's hash), so that Services spread.
func nodesFor(svc *corev1.Service, eligible []Node, endpointNodes map[string]bool) []Node {
	candidates := eligible
	if Local(svc) {
		candidates = nil
		for _, n := range eligible {
			if endpointNodes[n.Name] {
				candidates = append(candidates, n)
			}
		}
	}
	if len(candidates) <= MaxNodes {
		return candidates
	}
	h := fnv.New32a()
	h.Write([]byte(svc.UID))
	start := int(h.Sum32() % uint32(len(candidates)))
	out := make([]Node, MaxNodes)
	for i := range out {
		out[i] = candidates[(start+i)%len(candidates)]
	}
	return out
}

func Local(svc *corev1.Service) bool {
	return svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}
