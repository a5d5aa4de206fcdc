package metallb

import (
	"context"
	"encoding/json"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Snapshot is the cluster as the module sees it at the start of a reconcile:
// everything a decision looks at, each object read once, from the cache but
// for the lookups of objects another installation created.
type Snapshot struct {
	Platform PlatformInputs
	// Tuning is the MetalLB object that counts (metallb-system/metallb), nil
	// when there is none; Ignored are the others.
	Tuning  *v1beta1.MetalLB
	Ignored []*v1beta1.MetalLB
	// Configs are the configuration objects' metadata, by where they are.
	Configs configs
	// PriorityClasses and RuntimeClasses are the names of those that exist.
	PriorityClasses, RuntimeClasses sets.Set[string]
	// Owned are the objects that carry the ownership labels, of Kinds: every
	// kind the module renders, in apply order.
	Owned map[apply.Key]*unstructured.Unstructured
	Kinds []schema.GroupVersionKind
	// Foreign are objects the module renders that exist without them.
	Foreign []apply.Foreign
	// AdoptionAllowed tells whether MetalLB's namespace carries
	// AdoptAnnotation: the module may take foreign objects over.
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
	// Tracking is the rollout tracking kept on the namespace.
	Tracking status.Tracking
	// SpeakerPods and FRRK8sPods are the pods of the speakers' and of
	// frr-k8s's DaemonSets, read only while a rollout is in flight: only such
	// a rollout can be found hung.
	SpeakerPods, FRRK8sPods []corev1.Pod
	// ClusterOperator is nil where it, or its API, does not exist.
	ClusterOperator *configv1.ClusterOperator
	// MemberlistKey is a key made for the memberlist Secret when none is
	// owned, for the plan to render (the Secret is create-only: a key that
	// exists is never replaced).
	MemberlistKey string
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

// owned returns the owned object of a kind and name, or nil.
func (s *Snapshot) owned(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	return s.Owned[apply.Key{GroupKind: gvk.GroupKind(), Namespace: namespace, Name: name}]
}

// observe reads the snapshot.
func (r *Reconciler) observe(ctx context.Context) (*Snapshot, error) {
	s := &Snapshot{}
	for _, read := range []func(context.Context, *Snapshot) error{
		r.readTuning, r.readPlatform, r.readOwned, r.readForeign, r.readWorkloads, r.readMemberlistKeys, r.readConfigs,
		r.readAdvertisements, r.readConfigStates, r.readClasses, r.readNodePods, r.readClusterOperator,
	} {
		if err := read(ctx, s); err != nil {
			return nil, err
		}
	}
	if s.owned(secretKind, r.opts.Namespace, memberlistSecret) == nil {
		s.MemberlistKey = NewMemberlistKey()
	}
	return s, nil
}

func (r *Reconciler) readTuning(ctx context.Context, s *Snapshot) error {
	var list v1beta1.MetalLBList
	if err := r.client.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.Namespace == r.opts.Namespace && o.Name == ObjectName {
			s.Tuning = o
		} else {
			s.Ignored = append(s.Ignored, o)
		}
	}
	return nil
}

// readPlatform reads what the platform is decided from: nothing with
// --platform, Infrastructure/cluster on OpenShift, else the Nodes.
func (r *Reconciler) readPlatform(ctx context.Context, s *Snapshot) error {
	store, err := r.nodeStore(ctx)
	if err != nil {
		return err
	}
	nodes := store.List()
	s.Platform.NodeCount = len(nodes)
	if r.opts.Platform != "" {
		return nil
	}
	if r.openshift {
		infra := &configv1.Infrastructure{}
		err := r.client.Get(ctx, client.ObjectKey{Name: "cluster"}, infra)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && infra.Status.PlatformStatus != nil && infra.Status.PlatformStatus.Type != "" {
			s.Platform.Infrastructure = string(infra.Status.PlatformStatus.Type)
			return nil
		}
	}
	for _, o := range nodes {
		if n, ok := o.(*corev1.Node); ok {
			s.Platform.Nodes = append(s.Platform.Nodes, NodeProvider{Name: n.Name, ProviderID: n.Spec.ProviderID})
		}
	}
	return nil
}

// nodeStore is the store of the cache's Node informer, read as it is: a List
// would copy every Node, thousands of them, at every reconcile.
func (r *Reconciler) nodeStore(ctx context.Context) (toolscache.Store, error) {
	informer, err := r.cache.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return nil, err
	}
	withStore, ok := informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("the Node informer, a %T, has no store", informer)
	}
	return withStore.GetStore(), nil
}

// readOwned lists the objects of every kind the module renders that carry the
// ownership labels, and the tracking kept on the namespace among them.
func (r *Reconciler) readOwned(ctx context.Context, s *Snapshot) error {
	s.Owned, s.Kinds = map[apply.Key]*unstructured.Unstructured{}, r.inventory.kinds
	for _, gvk := range r.inventory.kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.client.List(ctx, list, client.MatchingLabels(ownership)); err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i] // read only: it may be the cache's own
			s.Owned[apply.KeyOf(o)] = o
		}
	}
	if ns := s.owned(namespaceKind, "", r.opts.Namespace); ns != nil {
		if data := ns.GetAnnotations()[TrackingAnnotation]; data != "" {
			_ = json.Unmarshal([]byte(data), &s.Tracking) // a mangled annotation starts tracking afresh
		}
	}
	return nil
}

// readConfigs lists the configuration objects of every kind, in every
// namespace; only their metadata is cached. Before MetalLB's CRDs are served
// there are none.
func (r *Reconciler) readConfigs(ctx context.Context, s *Snapshot) error {
	for _, gvk := range configKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := r.client.List(ctx, list)
		if meta.IsNoMatchError(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		s.Configs.Served = true
		s.Configs.add(gvk, list.Items, r.opts.Namespace)
	}
	return nil
}

func (r *Reconciler) readClasses(ctx context.Context, s *Snapshot) error {
	var priority schedulingv1.PriorityClassList
	if err := r.client.List(ctx, &priority); err != nil {
		return err
	}
	var runtime nodev1.RuntimeClassList
	if err := r.client.List(ctx, &runtime); err != nil {
		return err
	}
	s.PriorityClasses, s.RuntimeClasses = sets.New[string](), sets.New[string]()
	for _, c := range priority.Items {
		s.PriorityClasses.Insert(c.Name)
	}
	for _, c := range runtime.Items {
		s.RuntimeClasses.Insert(c.Name)
	}
	return nil
}

func (r *Reconciler) readNodePods(ctx context.Context, s *Snapshot) error {
	if !s.Tracking.InFlight() {
		return nil
	}
	for _, d := range []struct {
		selector labels.Set
		into     *[]corev1.Pod
	}{{speakerPods, &s.SpeakerPods}, {frrK8sPods, &s.FRRK8sPods}} {
		var pods corev1.PodList
		if err := r.client.List(ctx, &pods, client.InNamespace(r.opts.Namespace), client.MatchingLabels(d.selector)); err != nil {
			return err
		}
		*d.into = pods.Items
	}
	return nil
}

func (r *Reconciler) readClusterOperator(ctx context.Context, s *Snapshot) error {
	if r.clusterOperator == nil {
		return nil
	}
	var err error
	s.ClusterOperator, err = r.clusterOperator.Get(ctx)
	return err
}

// readAdvertisements reads MetalLB's advertisements and BGPPeers in its
// namespace, once their kinds are served.
func (r *Reconciler) readAdvertisements(ctx context.Context, s *Snapshot) error {
	if !s.Configs.Served {
		return nil
	}
	in := client.InNamespace(r.opts.Namespace)
	var bgp metallbv1beta1.BGPAdvertisementList
	var l2 metallbv1beta1.L2AdvertisementList
	var peers metallbv1beta2.BGPPeerList
	for _, list := range []client.ObjectList{&bgp, &l2, &peers} {
		if err := ignoreNoMatch(r.client.List(ctx, list, in)); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
	}
	for i := range bgp.Items {
		a := &bgp.Items[i]
		s.Advertisements = append(s.Advertisements, Advertisement{Object: metadataOf(a, metallbv1beta1.GroupVersion.WithKind(bgpAdvertisementKind)),
			Pools: a.Spec.IPAddressPools, PoolSelectors: a.Spec.IPAddressPoolSelectors, Peers: a.Spec.Peers})
	}
	for i := range l2.Items {
		a := &l2.Items[i]
		s.Advertisements = append(s.Advertisements, Advertisement{Object: metadataOf(a, metallbv1beta1.GroupVersion.WithKind(l2AdvertisementKind)),
			Pools: a.Spec.IPAddressPools, PoolSelectors: a.Spec.IPAddressPoolSelectors})
	}
	for i := range peers.Items {
		p := &peers.Items[i]
		s.Peers = append(s.Peers, Peer{Object: metadataOf(p, metallbv1beta2.GroupVersion.WithKind("BGPPeer")), HoldTime: p.Spec.HoldTime})
	}
	return nil
}

// readConfigStates reads MetalLB's components' reports on the configuration
// they loaded, once their kind is served: MetalLB's CRDs before v0.16, which
// a hand install being taken over may have, lack it.
func (r *Reconciler) readConfigStates(ctx context.Context, s *Snapshot) error {
	if !s.Configs.Served {
		return nil
	}
	var list metallbv1beta1.ConfigurationStateList
	if err := ignoreNoMatch(r.client.List(ctx, &list, client.InNamespace(r.opts.Namespace))); err != nil {
		return fmt.Errorf("listing ConfigurationStates: %w", err)
	}
	for i := range list.Items {
		c := &list.Items[i]
		s.ConfigStates = append(s.ConfigStates, ConfigState{Object: metadataOf(c, metallbv1beta1.GroupVersion.WithKind("ConfigurationState")),
			Component: c.Labels[configurationComponentLabel], Node: c.Labels[configurationNodeLabel],
			Result: string(c.Status.Result), ErrorSummary: c.Status.ErrorSummary})
	}
	return nil
}

// ignoreNoMatch drops the error of reading a kind that is not served.
func ignoreNoMatch(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}

// metadataOf is a MetalLB object's metadata, for the Events on it: typed
// objects from the cache do not know their kind.
func metadataOf(o client.Object, gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName(),
		UID: o.GetUID(), Labels: o.GetLabels()}}
	m.SetGroupVersionKind(gvk)
	return m
}
