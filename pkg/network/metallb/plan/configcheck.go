package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// Reasons of the mistakes in MetalLB's configuration the module tells about:
// the user's to fix, not the operator's health, so they never make it
// Degraded.
const (
	ReasonSelectsNoPool        = "SelectsNoPool"
	ReasonNoSuchPeer           = "NoSuchPeer"
	ReasonPoolNotAnnounced     = "PoolNotAnnounced"
	ReasonNoBGPPeer            = "NoBGPPeer"
	ReasonHoldTimeZero         = "HoldTimeZero"
	ReasonConfigurationInvalid = "ConfigurationInvalid"
)

// configMistakes are what MetalLB's configuration in its namespace gets
// wrong, as the module can tell from the objects and from MetalLB's own
// reports: each is told on its object, and in the status's message.
func configMistakes(pools []*metav1.PartialObjectMetadata, ads []Advertisement, peers []Peer, states []ConfigState) []problem {
	var out []problem
	announcedBy := map[string][]*metav1.PartialObjectMetadata{}
	for _, ad := range ads {
		selected := selectedPools(ad, pools)
		if len(selected) == 0 {
			out = append(out, problem{regarding: ad.Object, reason: ReasonSelectsNoPool, message: fmt.Sprintf(
				"%s %s/%s selects no IPAddressPool, and announces nothing: name an existing pool in spec.ipAddressPools, or fix spec.ipAddressPoolSelectors",
				ad.Object.Kind, ad.Object.Namespace, ad.Object.Name)})
		}
		for _, pool := range selected {
			announcedBy[pool] = append(announcedBy[pool], ad.Object)
		}
		out = append(out, missingPeers(ad, peers)...)
	}
	for _, pool := range pools {
		out = append(out, poolMistakes(pool, announcedBy[pool.Name], len(peers) > 0)...)
	}
	for _, p := range peers {
		if p.HoldTime != nil && p.HoldTime.Duration == 0 {
			out = append(out, problem{regarding: p.Object, reason: ReasonHoldTimeZero, message: fmt.Sprintf(
				"BGPPeer %s/%s has holdTime 0s (MetalLB's conversion stores that for a v1beta1 peer written without one): its sessions "+
					"keep no hold timer, and a node that dies keeps its routes at the router. Set a hold time: kubectl patch "+
					"bgppeer.v1beta2.metallb.io %s -n %s --type=merge -p '{\"spec\":{\"holdTime\":\"90s\"}}'",
				p.Object.Namespace, p.Object.Name, p.Object.Name, p.Object.Namespace)})
		}
	}
	return append(out, invalidConfigurations(states)...)
}

// selectedPools names the pools an advertisement selects: all of them when
// it names none and has no selector, as MetalLB reads it.
func selectedPools(ad Advertisement, pools []*metav1.PartialObjectMetadata) []string {
	var out []string
	for _, pool := range pools {
		if explain.SelectsPool(ad.Pools, ad.PoolSelectors, pool.Name, pool.Labels) {
			out = append(out, pool.Name)
		}
	}
	return out
}

// missingPeers are the BGPPeers a BGPAdvertisement names that do not exist.
func missingPeers(ad Advertisement, peers []Peer) []problem {
	var out []problem
	for _, name := range ad.Peers {
		if !slices.ContainsFunc(peers, func(p Peer) bool { return p.Object.Name == name }) {
			out = append(out, problem{regarding: ad.Object, reason: ReasonNoSuchPeer, message: fmt.Sprintf(
				"BGPAdvertisement %s/%s announces to BGPPeer %q, which does not exist in %s: create it, or remove it from spec.peers",
				ad.Object.Namespace, ad.Object.Name, name, ad.Object.Namespace)})
		}
	}
	return out
}

// poolMistakes tell a pool that no advertisement announces, or only BGP
// advertisements while no BGPPeer exists: its addresses are handed out, and
// nobody answers for them.
func poolMistakes(pool *metav1.PartialObjectMetadata, by []*metav1.PartialObjectMetadata, peers bool) []problem {
	c := problem{regarding: pool}
	switch {
	case len(by) == 0:
		c.reason, c.message = ReasonPoolNotAnnounced, fmt.Sprintf("IPAddressPool %s/%s is selected by no L2Advertisement or "+
			"BGPAdvertisement: MetalLB hands out its addresses and announces none of them. Create an advertisement for it",
			pool.Namespace, pool.Name)
	case !peers && !slices.ContainsFunc(by, func(o *metav1.PartialObjectMetadata) bool { return o.Kind == manifests.L2AdvertisementKind.Kind }):
		c.reason, c.message = ReasonNoBGPPeer, fmt.Sprintf("IPAddressPool %s/%s is announced only by BGP (%s), and no BGPPeer "+
			"exists in %s: MetalLB hands out its addresses and announces none of them. Create a BGPPeer for your router",
			pool.Namespace, pool.Name, kindNames(by), pool.Namespace)
	default:
		return nil
	}
	return []problem{c}
}

// invalidConfigurations tell what MetalLB's components report invalid in
// the configuration they loaded, once per report, on the first component
// that made it, naming the nodes whose speakers did.
func invalidConfigurations(states []ConfigState) []problem {
	var order []string
	by := map[string][]ConfigState{}
	for _, s := range states {
		if s.Result != manifests.ConfigurationInvalid {
			continue
		}
		if by[s.ErrorSummary] == nil {
			order = append(order, s.ErrorSummary)
		}
		by[s.ErrorSummary] = append(by[s.ErrorSummary], s)
	}
	var out []problem
	for _, summary := range order {
		var who []string
		for _, s := range by[summary] {
			who = append(who, componentName(s))
		}
		out = append(out, problem{regarding: by[summary][0].Object, reason: ReasonConfigurationInvalid, message: fmt.Sprintf(
			"MetalLB reports the configuration invalid (%s; kubectl get configurationstates -n %s): %s",
			explain.FirstOf(who, 3), by[summary][0].Object.Namespace, summary)})
	}
	return out
}

func componentName(s ConfigState) string {
	if s.Component == manifests.SpeakerName && s.Node != "" {
		return "speaker on " + s.Node
	}
	return s.Component
}

func kindNames(objs []*metav1.PartialObjectMetadata) string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Kind + " " + o.Name
	}
	return strings.Join(out, ", ")
}

// ConfigFindings are the mistakes of the snapshot's configuration, the
// preflight findings and what MetalLB reports failing, as kubectl metallb
// prints them: of the snapshot it reads Advertisements, Peers,
// ConfigStates, Preflight and Reports.
func ConfigFindings(s *Snapshot, now time.Time) []explain.Finding {
	pools := make([]*metav1.PartialObjectMetadata, len(s.Preflight.Pools))
	for i, p := range s.Preflight.Pools {
		pools[i] = p.Object
	}
	problems, _ := configProblems(s, pools, now)
	return findingsOf(problems)
}

// configProblems are the mistakes of the configuration, of which pools are
// the IPAddressPools, the preflight findings and the reports'
// (reportMistakes), and how soon to look again for the latter.
func configProblems(s *Snapshot, pools []*metav1.PartialObjectMetadata, now time.Time) ([]problem, time.Duration) {
	out := append(configMistakes(pools, s.Advertisements, s.Peers, s.ConfigStates), preflightMistakes(s.Preflight, s.Advertisements)...)
	reported, recheck := reportMistakes(s.Reports, s.Peers, s.Advertisements, s.Preflight.Pools, now)
	return append(out, reported...), recheck
}

// findingsOf words problems as findings.
func findingsOf(problems []problem) []explain.Finding {
	out := make([]explain.Finding, len(problems))
	for i, p := range problems {
		o := p.regarding
		out[i] = explain.Finding{Regarding: fmt.Sprintf("%s %s/%s", o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName()),
			Reason: p.reason, Message: p.message}
	}
	return out
}
