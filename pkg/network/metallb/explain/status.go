package explain

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Report is what `kubectl metallb status` tells.
type Report struct {
	Namespace string `json:"namespace"`
	// OperatorVersion is the release the operator reports on the MetalLB
	// object; MetalLBVersion the MetalLB its controller runs (its image's
	// tag); Backend the BGP backend set there.
	OperatorVersion string             `json:"operatorVersion,omitempty"`
	MetalLBVersion  string             `json:"metallbVersion,omitempty"`
	Backend         string             `json:"backend,omitempty"`
	Conditions      []metav1.Condition `json:"conditions,omitempty"`
	// Controller is MetalLB's controller's ready replicas, "missing" when
	// there is no Deployment.
	Controller     string                    `json:"controller"`
	Speakers       []SpeakerReport           `json:"speakers,omitempty"`
	Pools          []PoolReport              `json:"pools,omitempty"`
	Advertisements []AdvertisementReport     `json:"advertisements,omitempty"`
	Peers          []PeerReport              `json:"peers,omitempty"`
	Maintenance    []v1beta1.NodeMaintenance `json:"maintenance,omitempty"`
	Findings       []Finding                 `json:"findings,omitempty"`
	CouldNotRead   []Unread                  `json:"couldNotRead,omitempty"`
}

// SpeakerReport is one node's speaker.
type SpeakerReport struct {
	Node  string `json:"node"`
	Ready bool   `json:"ready"`
	// Excluded tells that the node carries the exclusion label: its speaker
	// announces nothing.
	Excluded bool `json:"excluded,omitempty"`
}

// PoolReport is one pool, with its addresses used and free.
type PoolReport struct {
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	UsedIPv4  int64    `json:"usedIPv4"`
	FreeIPv4  int64    `json:"freeIPv4"`
	UsedIPv6  int64    `json:"usedIPv6"`
	FreeIPv6  int64    `json:"freeIPv6"`
	// AutoAssign is false for a pool only Services naming it use.
	AutoAssign bool `json:"autoAssign"`
}

// AdvertisementReport is an L2Advertisement or a BGPAdvertisement, by what
// it selects.
type AdvertisementReport struct {
	Kind  string   `json:"kind"`
	Name  string   `json:"name"`
	Pools []string `json:"pools"`
	// Nodes names the nodes it announces from ("all" without selectors).
	Nodes      []string `json:"nodes"`
	Interfaces []string `json:"interfaces,omitempty"`
	Peers      []string `json:"peers,omitempty"`
}

// PeerReport is a BGPPeer, with its sessions where the backend reports them.
type PeerReport struct {
	Name       string          `json:"name"`
	Address    string          `json:"address"`
	ASN        uint32          `json:"asn"`
	BFDProfile string          `json:"bfdProfile,omitempty"`
	Nodes      []string        `json:"nodes"`
	Sessions   []SessionReport `json:"sessions,omitempty"`
}

// SessionReport is a BGP session of a node, as frr-k8s reports it
// (BGPSessionState); the native backend reports sessions only as metrics.
type SessionReport struct {
	Node string `json:"node"`
	// Peer is the peer's address, as the backend names it.
	Peer string `json:"peer"`
	BGP  string `json:"bgp"`
	BFD  string `json:"bfd,omitempty"`
}

// Finding is a mistake in the configuration, told on its object.
type Finding struct {
	Regarding string `json:"regarding"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// Status reports the installation; sessions are the backend's reports, and
// findings what is wrong in the configuration.
func Status(c *Cluster, sessions []SessionReport, findings []Finding) Report {
	r := Report{Namespace: c.Namespace, Controller: "missing", Conditions: c.Conditions, Findings: findings, CouldNotRead: c.Unreadable}
	if c.MetalLB != nil {
		r.OperatorVersion, r.Maintenance, r.Backend = c.MetalLB.Status.Version, c.MetalLB.Status.Maintenance, string(c.MetalLB.Spec.BGPBackend)
	}
	if c.Controller != nil {
		r.Controller = fmt.Sprintf("%d/%d ready", c.Controller.Status.ReadyReplicas, c.Controller.Status.Replicas)
		r.MetalLBVersion = imageTag(c.Controller)
	}
	r.Speakers = c.speakerReports()
	for i := range c.Pools {
		p := &c.Pools[i]
		r.Pools = append(r.Pools, PoolReport{Name: p.Name, Addresses: p.Spec.Addresses, AutoAssign: p.Spec.AutoAssign == nil || *p.Spec.AutoAssign,
			UsedIPv4: p.Status.AssignedIPv4, FreeIPv4: p.Status.AvailableIPv4, UsedIPv6: p.Status.AssignedIPv6, FreeIPv6: p.Status.AvailableIPv6})
	}
	r.Advertisements = c.advertisementReports()
	for i := range c.Peers {
		p := &c.Peers[i]
		pr := PeerReport{Name: p.Name, Address: p.Spec.Address, ASN: p.Spec.ASN, BFDProfile: p.Spec.BFDProfile,
			Nodes: c.nodesOf(p.Spec.NodeSelectors), Sessions: sessionsWith(sessions, p.Spec.Address)}
		r.Peers = append(r.Peers, pr)
	}
	return r
}

// speakerReports are the speakers by node, with the nodes that have none
// where the nodes could be read.
func (c *Cluster) speakerReports() []SpeakerReport {
	by := map[string]*SpeakerReport{}
	for i := range c.Speakers {
		p := &c.Speakers[i]
		if p.Spec.NodeName != "" {
			by[p.Spec.NodeName] = &SpeakerReport{Node: p.Spec.NodeName, Ready: podReady(p)}
		}
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if by[n.Name] == nil {
			by[n.Name] = &SpeakerReport{Node: n.Name}
		}
		_, by[n.Name].Excluded = n.Labels[corev1.LabelNodeExcludeBalancers]
	}
	out := make([]SpeakerReport, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b SpeakerReport) int { return strings.Compare(a.Node, b.Node) })
	return out
}

func (c *Cluster) advertisementReports() []AdvertisementReport {
	var out []AdvertisementReport
	for i := range c.L2Ads {
		ad := &c.L2Ads[i]
		out = append(out, AdvertisementReport{Kind: "L2Advertisement", Name: ad.Name, Interfaces: ad.Spec.Interfaces,
			Pools: c.poolsOf(ad.Spec.IPAddressPools, ad.Spec.IPAddressPoolSelectors), Nodes: c.nodesOf(ad.Spec.NodeSelectors)})
	}
	for i := range c.BGPAds {
		ad := &c.BGPAds[i]
		out = append(out, AdvertisementReport{Kind: "BGPAdvertisement", Name: ad.Name, Peers: ad.Spec.Peers,
			Pools: c.poolsOf(ad.Spec.IPAddressPools, ad.Spec.IPAddressPoolSelectors), Nodes: c.nodesOf(ad.Spec.NodeSelectors)})
	}
	return out
}

// poolsOf names the pools an advertisement selects.
func (c *Cluster) poolsOf(names []string, selectors []metav1.LabelSelector) []string {
	var out []string
	for i := range c.Pools {
		if SelectsPool(names, selectors, c.Pools[i].Name, c.Pools[i].Labels) {
			out = append(out, c.Pools[i].Name)
		}
	}
	return out
}

// nodesOf names the nodes selectors select: "all" without selectors, "?"
// when the nodes could not be read.
func (c *Cluster) nodesOf(selectors []metav1.LabelSelector) []string {
	if len(selectors) == 0 {
		return []string{"all"}
	}
	if !c.Readable(KindNodes) {
		return []string{"?"}
	}
	out := []string{}
	for i := range c.Nodes {
		if selectsAny(selectors, c.Nodes[i].Labels) {
			out = append(out, c.Nodes[i].Name)
		}
	}
	return out
}

func sessionsWith(sessions []SessionReport, address string) []SessionReport {
	var out []SessionReport
	for _, s := range sessions {
		if PeerIs(s.Peer, address) {
			out = append(out, s)
		}
	}
	return out
}

// imageTag is the tag of the controller's image: the MetalLB release it
// runs.
func imageTag(d *appsv1.Deployment) string {
	for _, ctr := range d.Spec.Template.Spec.Containers {
		if _, tag, ok := strings.Cut(ctr.Image[strings.LastIndex(ctr.Image, "/")+1:], ":"); ok {
			return tag
		}
	}
	return ""
}

// SessionEstablished is the state of an established BGP session, as frr-k8s
// reports it.
const SessionEstablished = "Established"

// PeerIs tells whether a peer as a backend names it (its address, or
// address:port) is the peer at address.
func PeerIs(reported, address string) bool {
	return reported == address || strings.HasPrefix(reported, address+":")
}
