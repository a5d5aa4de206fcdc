package explain

import (
	"fmt"
	"slices"
	"strings"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Why a node may not announce a Service, in the order they are checked.
const (
	nodeExcluded   = "excluded"
	nodeNoSpeaker  = "no speaker"
	nodeUnselected = "unselected"
	nodeNoEndpoint = "no endpoint"
)

// noEligibleNode tells why no node may announce a Service, node by node;
// nil when one may, or when the nodes could not be read.
func (c *Cluster) noEligibleNode(t Target, l2 []*metallbv1beta1.L2Advertisement, bgp []*metallbv1beta1.BGPAdvertisement) *finding {
	if !c.Readable(KindNodes) || len(c.Nodes) == 0 {
		return nil
	}
	speakers := c.speakerNodes()
	local := t.Service.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	endpoints := readyNodes(t)
	out := map[string][]string{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		var why string
		switch _, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]; {
		case excluded:
			why = nodeExcluded
		case speakers != nil && !speakers.Has(n.Name):
			why = nodeNoSpeaker
		case !c.selectedByAds(n, l2, bgp):
			why = nodeUnselected
		case local && !endpoints.Has(n.Name):
			why = nodeNoEndpoint
		default:
			return nil
		}
		out[why] = append(out[why], n.Name)
	}
	return c.ineligible(out)
}

// ineligible words the nodes' reasons, with a fix for each.
func (c *Cluster) ineligible(by map[string][]string) *finding {
	type words struct{ one, many, fix, reason string }
	all := map[string]words{
		nodeExcluded:   {"carries", "carry", "take the label off a node (kubectl label node NAME " + corev1.LabelNodeExcludeBalancers + "-), unless node maintenance set it (kubectl metallb status)", "AllNodesExcluded"},
		nodeNoSpeaker:  {"runs", "run", fmt.Sprintf("kubectl get pods -n %s -l component=speaker -o wide tells why the speakers are missing", c.Namespace), "NoSpeaker"},
		nodeUnselected: {"matches", "match", "widen the advertisement's spec.nodeSelectors", "NoNodeSelected"},
		nodeNoEndpoint: {"has", "have", "run a ready endpoint on a node that may announce, or set spec.externalTrafficPolicy: Cluster", "NoLocalEndpoint"},
	}
	what := map[string]string{
		nodeExcluded:   "%s the label " + corev1.LabelNodeExcludeBalancers,
		nodeNoSpeaker:  "%s no ready speaker",
		nodeUnselected: "%s no nodeSelectors of the advertisements (and BGPPeers) for its pool",
		nodeNoEndpoint: "%s none of its ready endpoints, and its externalTrafficPolicy is Local",
	}
	var why, fix []string
	reason := "NoEligibleNode"
	for _, k := range []string{nodeExcluded, nodeNoSpeaker, nodeUnselected, nodeNoEndpoint} {
		if nodes := by[k]; len(nodes) > 0 {
			verb := all[k].many
			if len(nodes) == 1 {
				verb = all[k].one
			}
			why = append(why, nodeList(nodes)+" "+fmt.Sprintf(what[k], verb))
			fix = append(fix, all[k].fix)
			reason = all[k].reason
		}
	}
	if len(why) > 1 {
		reason = "NoEligibleNode"
	}
	return &finding{reason, "No node may announce it: " + strings.Join(why, "; ") + ".", capitalize(strings.Join(fix, "; ")) + "."}
}

// nodeList names up to three nodes, and counts the others.
func nodeList(nodes []string) string {
	return FirstOf(slices.Sorted(slices.Values(nodes)), 3)
}

// FirstOf joins the first n items, and says how many more there are.
func FirstOf(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// speakerNodes are the nodes where a speaker pod is ready; nil when the
// pods could not be read (every node is taken to have one).
func (c *Cluster) speakerNodes() sets.Set[string] {
	if !c.Readable(KindSpeakers) {
		return nil
	}
	out := sets.New[string]()
	for _, p := range c.Speakers {
		if p.Spec.NodeName != "" && podReady(&p) {
			out.Insert(p.Spec.NodeName)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// selectedByAds tells whether a node is among those an advertisement of
// the pool announces from: an L2Advertisement's nodeSelectors, or a
// BGPAdvertisement's and one of its peers' nodeSelectors.
func (c *Cluster) selectedByAds(n *corev1.Node, l2 []*metallbv1beta1.L2Advertisement, bgp []*metallbv1beta1.BGPAdvertisement) bool {
	for _, ad := range l2 {
		if selectsAny(ad.Spec.NodeSelectors, n.Labels) {
			return true
		}
	}
	for _, ad := range bgp {
		if !selectsAny(ad.Spec.NodeSelectors, n.Labels) {
			continue
		}
		for i := range c.Peers {
			p := &c.Peers[i]
			if (len(ad.Spec.Peers) == 0 || slices.Contains(ad.Spec.Peers, p.Name)) && selectsAny(p.Spec.NodeSelectors, n.Labels) {
				return true
			}
		}
	}
	return false
}
