package explain

import (
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Cluster is what the plugin read. A kind it could not read is named in
// Unreadable, and its slice is empty: what depends on it says so rather
// than guess.
type Cluster struct {
	// Namespace is MetalLB's.
	Namespace string
	// MetalLB is the operator's MetalLB object, nil when there is none.
	MetalLB *v1beta1.MetalLB
	// Conditions are the operator's: the MetalLB object's, or, where there
	// is none, those of its ClusterOperator on OpenShift.
	Conditions []metav1.Condition
	// Controller is MetalLB's controller Deployment, nil when there is none;
	// Speakers is the speaker DaemonSet's pods.
	Controller *appsv1.Deployment
	Speakers   []corev1.Pod
	Pools      []metallbv1beta1.IPAddressPool
	L2Ads      []metallbv1beta1.L2Advertisement
	BGPAds     []metallbv1beta1.BGPAdvertisement
	Peers      []metallbv1beta2.BGPPeer
	// L2Statuses and BGPStatuses are MetalLB's reports of where it announces
	// each Service.
	L2Statuses  []metallbv1beta1.ServiceL2Status
	BGPStatuses []metallbv1beta1.ServiceBGPStatus
	Nodes       []corev1.Node
	// Namespaces are those of the cluster, for the pools' namespace selectors.
	Namespaces []corev1.Namespace
	// Services are the cluster's LoadBalancer Services: who holds an address.
	Services []corev1.Service
	// Unreadable names what could not be read, and why ("nodes: forbidden").
	Unreadable []Unread
}

// Unread is a kind the plugin could not read.
type Unread struct {
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// Target is the Service explained, with what is its own: its endpoints and
// the Events about it.
type Target struct {
	Service   *corev1.Service
	Endpoints []discoveryv1.EndpointSlice
	Events    []corev1.Event
}

// Readable tells whether a kind was read.
func (c *Cluster) Readable(what string) bool {
	for _, u := range c.Unreadable {
		if u.What == what {
			return false
		}
	}
	return true
}

// Kinds the plugin reads, as Unread names them.
const (
	KindNodes       = "nodes"
	KindNamespaces  = "namespaces"
	KindSpeakers    = "pods in MetalLB's namespace"
	KindEndpoints   = "endpointslices"
	KindEvents      = "events"
	KindMetalLB     = "metallbs"
	KindController  = "deployments in MetalLB's namespace"
	KindServices    = "services"
	KindL2Statuses  = "servicel2statuses"
	KindPools       = "ipaddresspools"
	KindBGPStatuses = "servicebgpstatuses"
)

// selectsAny tells whether any of the selectors matches; none matches
// everything, as MetalLB reads its selector lists. An invalid selector
// matches nothing (MetalLB refuses the object).
func selectsAny(selectors []metav1.LabelSelector, set map[string]string) bool {
	if len(selectors) == 0 {
		return true
	}
	for i := range selectors {
		if s, err := metav1.LabelSelectorAsSelector(&selectors[i]); err == nil && s.Matches(labels.Set(set)) {
			return true
		}
	}
	return false
}
