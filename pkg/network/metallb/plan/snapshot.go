package plan

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	maintenance "github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Snapshot is the cluster as the module sees it at the start of a reconcile:
// everything a decision looks at, each object read once, from the caches but
// for another installation's memberlist keys. It is read only: the owned
// objects are the cache's own.
type Snapshot struct {
	Platform PlatformInputs
	// MetalLB is the MetalLB object that counts (metallb-system/metallb), nil
	// when there is none; Ignored are the others.
	MetalLB *v1beta1.MetalLB
	Ignored []*v1beta1.MetalLB
	// Maintenance is node maintenance's last report.
	Maintenance maintenance.Report
	// Configs are the configuration objects' metadata, by where they are.
	Configs Configs
	// PriorityClasses and RuntimeClasses are the names of those that exist.
	PriorityClasses, RuntimeClasses sets.Set[string]
	// Owned are the objects that carry the ownership labels, of Kinds: every
	// kind the module renders (but see FoundationOnly), in apply order.
	Owned map[objects.Key]*unstructured.Unstructured
	Kinds []schema.GroupVersionKind
	// FoundationOnly tells that Owned, Kinds and Foreign are of the
	// Foundation's kinds only, and Workloads and the preflight's kube-proxy
	// configuration unread: the other kinds' informers have not started.
	FoundationOnly bool
	// MemberlistFound tells, with FoundationOnly, that MetalLB's memberlist
	// Secret exists in its namespace: MetalLB was deployed there, by the
	// module or by hand.
	MemberlistFound bool
	// Foreign are objects the module renders that exist without them.
	Foreign []objects.Foreign
	// AdoptionAllowed tells whether MetalLB's namespace carries
	// manifests.AdoptAnnotation: the module may take foreign objects over.
	AdoptionAllowed bool
	// Workloads are the metadata of MetalLB's workloads, the module's and
	// others': speaker DaemonSets in every namespace, controller Deployments
	// in MetalLB's.
	Workloads []*metav1.PartialObjectMetadata
	// MemberlistKeys are the keys of the memberlist Secret while it is
	// foreign, nil otherwise: a takeover keeps that Secret as it is.
	MemberlistKeys []string
	// Advertisements, Peers and ConfigStates are MetalLB's advertisements and
	// BGPPeers in its namespace, by what they select and set, and its
	// components' reports on the configuration they loaded: what tells the
	// user's mistakes in it.
	Advertisements []Advertisement
	Peers          []Peer
	ConfigStates   []ConfigState
	// Preflight is what tells what breaks MetalLB from outside its
	// configuration.
	Preflight Preflight
	// Reports are what MetalLB's speakers and frr-k8s report failing in
	// their announcing.
	Reports Reports
	// Tracking is the rollout tracking kept on the namespace, and
	// TrackingVersion the namespace's resourceVersion it was read at.
	Tracking        status.Tracking
	TrackingVersion string
	// SpeakerPods and FRRK8sPods are the pods of the speakers' and of
	// frr-k8s's DaemonSets, read only when the rollout tracked may be hung
	// (MayBeHung) or frr-k8s's pods may be leaving the nodes
	// (FRRK8sMayBeLeaving): reading them on every reconcile of a rollout over
	// thousands of nodes was most of the operator's CPU.
	SpeakerPods, FRRK8sPods []corev1.Pod
	// FRRK8sLeftAt is when the last batch of frr-k8s's pods leaving the
	// nodes was deleted, or when the operator started (leaveNodeByNode).
	FRRK8sLeftAt time.Time
	// PodCreations are what the DaemonSet controller said of creating the
	// pods of MetalLB's DaemonSets (its FailedCreate and SuccessfulCreate
	// Events): a DaemonSet has no condition that says its pods are refused.
	PodCreations []PodCreation
	// MonitoringServed tells that the CRDs of manifests.MonitoringKinds
	// exist: the monitoring objects are rendered, and the owned ones of those
	// kinds are among Owned.
	MonitoringServed bool
	// MonitoringPending tells that their CRDs exist and the API server does
	// not serve the kinds yet.
	MonitoringPending bool
	// ClusterTLSProfile is the spec.tlsSecurityProfile of OpenShift's
	// APIServer/cluster, nil where it, or its API, does not exist.
	ClusterTLSProfile *configv1.TLSSecurityProfile
	// PlatformFRRK8s is the frr-k8s OpenShift's network operator runs, nil
	// where its API does not exist.
	PlatformFRRK8s *manifests.PlatformFRRK8s
	// ClusterOperator is nil where it, or its API, does not exist.
	ClusterOperator *configv1.ClusterOperator
	// MemberlistKey is a key made for the memberlist Secret when none is
	// owned, for the plan to render (the Secret is create-only: a key that
	// exists is never replaced).
	MemberlistKey string
}

// PodCreation is one Event of a DaemonSet controller about creating the
// DaemonSet's pods.
type PodCreation struct {
	// DaemonSet is the DaemonSet's UID: one deleted and made again under the
	// same name has new Events.
	DaemonSet types.UID
	// Failed tells a FailedCreate from a SuccessfulCreate.
	Failed  bool
	Message string
	// At is when it last happened: a repeated Event counts again.
	At time.Time
}

// PlatformInputs are what tells the platform: the Infrastructure object's
// platform type, where it exists, else the Nodes' provider IDs.
type PlatformInputs struct {
	// NodeCount is the number of nodes, read whatever tells the platform: a
	// single node has the node-address mode's default differ.
	NodeCount      int
	Infrastructure string
	Nodes          []NodeProvider
}

// NodeProvider is what a Node tells of the platform.
type NodeProvider struct {
	Name, ProviderID string
}

// OwnedObject returns the owned object of a kind and name, or nil.
func (s *Snapshot) OwnedObject(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	return s.Owned[objects.Key{GroupKind: gvk.GroupKind(), Namespace: namespace, Name: name}]
}

// Configs are the configuration objects of the cluster, by where they are.
type Configs struct {
	// Served tells whether their kinds are served: MetalLB's CRDs exist.
	Served      bool
	InNamespace []*metav1.PartialObjectMetadata
	// Elsewhere are those outside MetalLB's namespace, which MetalLB ignores.
	Elsewhere []*metav1.PartialObjectMetadata
}

// Add sorts objects of a kind into MetalLB's namespace and elsewhere.
func (c *Configs) Add(gvk schema.GroupVersionKind, items []metav1.PartialObjectMetadata, namespace string) {
	for i := range items {
		o := &items[i]
		o.SetGroupVersionKind(gvk)
		if o.Namespace == namespace {
			c.InNamespace = append(c.InNamespace, o)
		} else {
			c.Elsewhere = append(c.Elsewhere, o)
		}
	}
}

// ofKind returns the objects of a kind in MetalLB's namespace.
func (c *Configs) ofKind(gvk schema.GroupVersionKind) []*metav1.PartialObjectMetadata {
	var out []*metav1.PartialObjectMetadata
	for _, o := range c.InNamespace {
		if o.Kind == gvk.Kind {
			out = append(out, o)
		}
	}
	return out
}

// Advertisement is a BGPAdvertisement or an L2Advertisement, by what it
// selects.
type Advertisement struct {
	Object        *metav1.PartialObjectMetadata
	Pools         []string
	PoolSelectors []metav1.LabelSelector
	// Peers are the BGPPeers a BGPAdvertisement names; none is all.
	Peers []string
	// NodeSelectors select the nodes it announces from; none is all.
	NodeSelectors []metav1.LabelSelector
	// Interfaces are those an L2Advertisement announces on; none is all.
	Interfaces []string
}

// Peer is a BGPPeer, by the hold time it sets (nil: MetalLB's default).
type Peer struct {
	Object   *metav1.PartialObjectMetadata
	Address  string
	ASN      uint32
	HoldTime *metav1.Duration
	// NodeSelectors select the nodes that peer with it; none is all.
	NodeSelectors []metav1.LabelSelector
}

// ConfigState is a MetalLB component's report on the configuration it loaded
// (MetalLB's ConfigurationState).
type ConfigState struct {
	Object               *metav1.PartialObjectMetadata
	Component, Node      string
	Result, ErrorSummary string
}
