package explain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Protocols as Announcer names them.
const (
	ProtocolLayer2 = "layer2"
	ProtocolBGP    = "bgp"
)

// announcers are the nodes MetalLB reports announcing the Service from, by
// node.
func (c *Cluster) announcers(svc *corev1.Service) []Announcer {
	var out []Announcer
	for _, s := range c.L2Statuses {
		if s.Status.ServiceNamespace == svc.Namespace && s.Status.ServiceName == svc.Name {
			a := Announcer{Node: s.Status.Node, Protocol: ProtocolLayer2}
			for _, i := range s.Status.Interfaces {
				a.Interfaces = append(a.Interfaces, i.Name)
			}
			out = append(out, a)
		}
	}
	for _, s := range c.BGPStatuses {
		if s.Status.ServiceNamespace == svc.Namespace && s.Status.ServiceName == svc.Name {
			out = append(out, Announcer{Node: s.Status.Node, Protocol: ProtocolBGP, Peers: slices.Sorted(slices.Values(s.Status.Peers))})
		}
	}
	slices.SortFunc(out, func(a, b Announcer) int { return strings.Compare(a.Node+a.Protocol, b.Node+b.Protocol) })
	return out
}

// AnnouncesInLayer2 tells whether MetalLB reports a node announcing the
// Service in layer 2 (a ServiceL2Status).
func (c *Cluster) AnnouncesInLayer2(svc types.NamespacedName) bool {
	return slices.ContainsFunc(c.L2Statuses, func(s metallbv1beta1.ServiceL2Status) bool {
		return s.Status.ServiceNamespace == svc.Namespace && s.Status.ServiceName == svc.Name
	})
}

// HasService tells whether the LoadBalancer Service exists (the one of uid,
// where uid is given); true where the Services could not be read.
func (c *Cluster) HasService(svc types.NamespacedName, uid types.UID) bool {
	if !c.Readable(KindServices) {
		return true
	}
	return slices.ContainsFunc(c.Services, func(s corev1.Service) bool {
		return s.Namespace == svc.Namespace && s.Name == svc.Name && (uid == "" || s.UID == uid)
	})
}

// whyUnannounced tells why no node announces a Service that has an address.
func (c *Cluster) whyUnannounced(t Target, poolName string) *finding {
	svc := t.Service
	p := c.pool(poolName)
	if p == nil {
		if a, err := netip.ParseAddr(svc.Status.LoadBalancer.Ingress[0].IP); err == nil {
			p = c.poolOf(a)
		}
	}
	if p == nil {
		return &finding{"AddressOutsidePools", fmt.Sprintf("Its address %s is in no IPAddressPool of %s any more, and MetalLB announces only the addresses of its pools.", svc.Status.LoadBalancer.Ingress[0].IP, c.Namespace),
			"Give the address back to a pool, or create the Service again to get a new one."}
	}
	l2, bgp := c.l2AdsFor(p, svc), c.bgpAdsFor(p)
	if len(l2) == 0 && len(bgp) == 0 {
		return &finding{"PoolNotAnnounced", fmt.Sprintf("No L2Advertisement or BGPAdvertisement selects its IPAddressPool %s: MetalLB handed out the address and announces it nowhere.", p.Name),
			fmt.Sprintf("Create an L2Advertisement (or a BGPAdvertisement) in %s whose spec.ipAddressPools names %s.", c.Namespace, p.Name)}
	}
	if len(l2) == 0 && len(c.Peers) == 0 {
		return &finding{"NoBGPPeer", fmt.Sprintf("Its IPAddressPool %s is announced only by BGP, and no BGPPeer exists in %s.", p.Name, c.Namespace),
			fmt.Sprintf("Create a BGPPeer for your router in %s.", c.Namespace)}
	}
	if c.Readable(KindEndpoints) && !hasReadyEndpoint(t) {
		return &finding{"NoReadyEndpoint", "It has no ready endpoint, and MetalLB announces a Service only while it has one.",
			fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s: check the Service's selector and its pods' readiness.", svc.Namespace, svc.Name)}
	}
	if f := c.noEligibleNode(t, l2, bgp); f != nil {
		return f
	}
	for _, ev := range slices.Backward(t.Events) {
		if ev.Reason == ReasonAnnounceFailed {
			return &finding{ReasonInterfaceMissing, Sentence("MetalLB's speaker could not announce it: " + ev.Message),
				"Name in the L2Advertisement's spec.interfaces interfaces the nodes have, or leave spec.interfaces out."}
		}
	}
	return &finding{"NotAnnouncedYet", "MetalLB has not reported announcing it yet (no ServiceL2Status or ServiceBGPStatus names it).",
		fmt.Sprintf("Wait a few seconds; if it stays so, kubectl logs -n %s -l component=speaker.", c.Namespace)}
}

// l2AdsFor are the L2Advertisements that announce a pool's addresses for a
// Service.
func (c *Cluster) l2AdsFor(p *metallbv1beta1.IPAddressPool, svc *corev1.Service) []*metallbv1beta1.L2Advertisement {
	var out []*metallbv1beta1.L2Advertisement
	for i := range c.L2Ads {
		ad := &c.L2Ads[i]
		if SelectsPool(ad.Spec.IPAddressPools, ad.Spec.IPAddressPoolSelectors, p.Name, p.Labels) && selectsAny(ad.Spec.ServiceSelectors, svc.Labels) {
			out = append(out, ad)
		}
	}
	return out
}

// bgpAdsFor are the BGPAdvertisements that announce a pool's addresses.
func (c *Cluster) bgpAdsFor(p *metallbv1beta1.IPAddressPool) []*metallbv1beta1.BGPAdvertisement {
	var out []*metallbv1beta1.BGPAdvertisement
	for i := range c.BGPAds {
		if ad := &c.BGPAds[i]; SelectsPool(ad.Spec.IPAddressPools, ad.Spec.IPAddressPoolSelectors, p.Name, p.Labels) {
			out = append(out, ad)
		}
	}
	return out
}

// SelectsPool tells whether an advertisement (its pool names and selectors)
// selects a pool (its name and labels): by name, by label, or all pools when
// it names none, as MetalLB reads it.
func SelectsPool(names []string, selectors []metav1.LabelSelector, pool string, labels map[string]string) bool {
	if len(names) == 0 && len(selectors) == 0 {
		return true
	}
	return slices.Contains(names, pool) || len(selectors) > 0 && selectsAny(selectors, labels)
}

// readyNodes are the nodes with a ready endpoint of the Service.
func readyNodes(t Target) sets.Set[string] {
	out := sets.New[string]()
	for _, s := range t.Endpoints {
		for _, ep := range s.Endpoints {
			if ready(ep.Conditions.Ready) && ep.NodeName != nil {
				out.Insert(*ep.NodeName)
			}
		}
	}
	return out
}

func hasReadyEndpoint(t Target) bool {
	for _, s := range t.Endpoints {
		if slices.ContainsFunc(s.Endpoints, func(ep discoveryv1.Endpoint) bool { return ready(ep.Conditions.Ready) }) {
			return true
		}
	}
	return false
}

// ready reads an endpoint's ready condition: unset is ready.
func ready(b *bool) bool { return b == nil || *b }

// ReasonAnnounceFailed is the reason of the Warning Event MetalLB's speaker
// writes on a Service when the interfaces an L2Advertisement names are not on
// the node elected to announce it; ReasonInterfaceMissing is the finding.
const (
	ReasonAnnounceFailed   = "announceFailed"
	ReasonInterfaceMissing = "InterfaceMissing"
)
