package metallb

import (
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodecache"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// cacheByObject is what the manager's cache holds for the module: of the
// Nodes, what nodecache keeps, MetalLB's and frr-k8s's pods, and the objects
// the module owns.
func cacheByObject(inv manifests.Inventory, namespace string) map[client.Object]cache.ByObject {
	selector := manifests.Ownership.AsSelector()
	inNamespace := map[string]cache.Config{namespace: {}}
	byObject := map[client.Object]cache.ByObject{
		&corev1.Node{}: {Transform: nodecache.Keep},
		// MetalLB's and frr-k8s's pods, to name the nodes of a hung rollout.
		&corev1.Pod{}: {Label: manifests.NodePods, Namespaces: inNamespace, Transform: podReadinessOnly},
		// The DaemonSet controller's Events, which alone say that it cannot
		// create a DaemonSet's pods, and, in the other namespaces, MetalLB's
		// speakers' Events on the Services they could not announce.
		&corev1.Event{}: {Namespaces: map[string]cache.Config{namespace: {FieldSelector: daemonSetEvents},
			cache.AllNamespaces: {FieldSelector: announceFailedEvents}}, Transform: eventWhatIsRead},
	}
	shared := sharedKinds(inv)
	for _, gvk := range inv.Kinds {
		// Every reconcile reads them all, the CRDs (tens of kilobytes with their
		// schemas' digests) among them; the module only reads them, so the cache
		// need not copy them.
		by := cache.ByObject{Label: selector, UnsafeDisableDeepCopy: new(true)}
		if inv.Namespaced[gvk] {
			// Only MetalLB's namespace: the operator may read its Secrets and the
			// like there and nowhere else.
			by.Namespaces = inNamespace
		}
		if shared[gvk] {
			by.Label, by.Transform = nil, ownedWholeOthersLookedUp
		}
		if gvk == objects.ConfigMap {
			by.Namespaces = map[string]cache.Config{namespace: {},
				kubeProxyConfig.Namespace: {FieldSelector: kubeProxyConfigOnly, Transform: stripManagedFields}}
		}
		byObject[objects.Empty(gvk)] = by
	}
	return byObject
}

// sharedKinds are the rendered kinds of which one informer serves both the
// module's own objects and the lookups: those of MetalLB's namespace, where
// nearly every object is the module's, so that one informer of them all costs
// less than two (each some 130 KB with its goroutines' stacks). Not Secrets:
// the operator never receives another's secret data; not DaemonSets, looked up
// in every namespace; nor the cluster-scoped kinds, of which the cluster has
// hundreds (and CRDs are large), watched whole only with the module's labels.
func sharedKinds(inv manifests.Inventory) map[schema.GroupVersionKind]bool {
	shared := map[schema.GroupVersionKind]bool{}
	for _, gvk := range inv.Kinds {
		if inv.Namespaced[gvk] && gvk != objects.Secret && gvk != objects.DaemonSet {
			shared[gvk] = true
		}
	}
	return shared
}

// ownedWholeOthersLookedUp is the transform of the shared kinds: it keeps the
// module's own objects whole (but their managedFields), and of another's what
// a lookup reads (lookupOnly).
func ownedWholeOthersLookedUp(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || manifests.Owned(u.GetLabels()) {
		return stripManagedFields(obj)
	}
	m := &metav1.PartialObjectMetadata{}
	if err := copyMetadata(u, m); err != nil {
		return nil, err
	}
	kept, err := lookupOnly(m)
	if err != nil {
		return nil, err
	}
	meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&kept.(*metav1.PartialObjectMetadata).ObjectMeta)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta}}, nil
}

// frrK8sPodSelector selects frr-k8s's pods, made once: podReadinessOnly
// runs for every event of every speaker.
var frrK8sPodSelector = manifests.FRRK8sPods.AsSelector()

// podReadinessOnly keeps of a MetalLB pod what names a hung rollout's nodes,
// its node and whether it is ready, and of frr-k8s's whether it is owned and
// going (frr-k8s leaving the nodes, plan.FRRK8sMayBeLeaving). A speaker runs
// on every node: whole pods would cost memory in step with the cluster's size.
func podReadinessOnly(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	kept := &corev1.Pod{
		TypeMeta:   p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, Labels: p.Labels},
		Spec:       corev1.PodSpec{NodeName: p.Spec.NodeName},
	}
	if frrK8sPodSelector.Matches(labels.Set(p.Labels)) {
		kept.OwnerReferences, kept.DeletionTimestamp = p.OwnerReferences, p.DeletionTimestamp
	}
	if c := status.PodReadyCondition(p); c != nil {
		kept.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
	}
	return kept, nil
}

// daemonSetEvents selects the Events on DaemonSets: the API server serves no
// selector of two reasons, and the others are few.
var daemonSetEvents = fields.OneTermEqualSelector("involvedObject.kind", objects.DaemonSet.Kind)

// Reasons of the DaemonSet controller's Events on creating a pod.
const (
	reasonFailedCreate     = "FailedCreate"
	reasonSuccessfulCreate = "SuccessfulCreate"
)

// announceFailedEvents selects MetalLB's speakers' Events on the Services
// they could not announce on an L2Advertisement's interfaces.
var announceFailedEvents = fields.OneTermEqualSelector("reason", explain.ReasonAnnounceFailed)

// eventWhatIsRead keeps of an Event what the module reads: of the DaemonSet
// controller's, what tells its pods' creation (readPodCreations); of the
// speakers', which Service and what they said (readReports).
func eventWhatIsRead(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	kept := &corev1.Event{
		TypeMeta:   e.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: e.Namespace, UID: e.UID, ResourceVersion: e.ResourceVersion},
		Reason:     e.Reason, EventTime: e.EventTime, LastTimestamp: e.LastTimestamp, FirstTimestamp: e.FirstTimestamp,
		InvolvedObject: corev1.ObjectReference{Kind: e.InvolvedObject.Kind, UID: e.InvolvedObject.UID},
	}
	if e.Series != nil {
		kept.Series = &corev1.EventSeries{LastObservedTime: e.Series.LastObservedTime}
	}
	switch e.Reason {
	case reasonFailedCreate:
		kept.Message = e.Message
	case explain.ReasonAnnounceFailed:
		kept.Message, kept.InvolvedObject.Namespace, kept.InvolvedObject.Name = e.Message, e.InvolvedObject.Namespace, e.InvolvedObject.Name
	}
	return kept, nil
}

// keepWhatIsRead is the cache's transform. Of BGPPeers, MetalLB's
// ConfigurationStates and frr-k8s's BGPSessionStates, which tell the
// mistakes in MetalLB's configuration, it keeps what the module reads (a
// BGPPeer's address and hold time, and not its password); they cannot go in
// ByObject, which needs their CRDs, the module's to create, when the cache
// is made. Of the rest it drops managedFields: nothing the
// module decides reads them, and for a CRD they are as large as its schema;
// and of a CRD it keeps its schemas' digests, all the drift check needs.
func keepWhatIsRead(obj any) (any, error) {
	switch o := obj.(type) {
	case *metallbv1beta2.BGPPeer:
		return peerWhatIsRead(obj)
	case *metallbv1beta1.ConfigurationState:
		return configurationResultOnly(obj)
	case *metallbv1beta1.IPAddressPool:
		return &metallbv1beta1.IPAddressPool{TypeMeta: o.TypeMeta, ObjectMeta: identity(o.ObjectMeta),
			Spec: metallbv1beta1.IPAddressPoolSpec{Addresses: o.Spec.Addresses}}, nil
	case *unstructured.Unstructured:
		if o.GroupVersionKind() == manifests.BGPSessionStateKind {
			return sessionStateOnly(o), nil
		}
		if _, err := stripManagedFields(o); err != nil {
			return nil, err
		}
		return objects.WithSchemaDigests(o), nil
	}
	return stripManagedFields(obj)
}

var stripManagedFields = cache.TransformStripManagedFields()

// peerWhatIsRead keeps of a BGPPeer who it is, where (its address and
// ASN: whether a node has a session with it), its hold time and the nodes it
// selects (maintenance's last node).
func peerWhatIsRead(obj any) (any, error) {
	p, ok := obj.(*metallbv1beta2.BGPPeer)
	if !ok {
		return obj, nil
	}
	return &metallbv1beta2.BGPPeer{TypeMeta: p.TypeMeta, ObjectMeta: identity(p.ObjectMeta), Spec: metallbv1beta2.BGPPeerSpec{
		Address: p.Spec.Address, ASN: p.Spec.ASN, HoldTime: p.Spec.HoldTime, NodeSelectors: p.Spec.NodeSelectors}}, nil
}

// configurationResultOnly keeps of a ConfigurationState who it is, which
// component's it is (its labels) and its result.
func configurationResultOnly(obj any) (any, error) {
	c, ok := obj.(*metallbv1beta1.ConfigurationState)
	if !ok {
		return obj, nil
	}
	return &metallbv1beta1.ConfigurationState{TypeMeta: c.TypeMeta, ObjectMeta: identity(c.ObjectMeta),
		Status: metallbv1beta1.ConfigurationStateStatus{Result: c.Status.Result, ErrorSummary: c.Status.ErrorSummary}}, nil
}

// sessionStateOnly keeps of frr-k8s's BGPSessionState who it is, since when,
// and the session: frr-k8s writes one per node and peer.
func sessionStateOnly(o *unstructured.Unstructured) *unstructured.Unstructured {
	kept := &unstructured.Unstructured{Object: map[string]any{}}
	kept.SetGroupVersionKind(o.GroupVersionKind())
	kept.SetNamespace(o.GetNamespace())
	kept.SetName(o.GetName())
	kept.SetUID(o.GetUID())
	kept.SetResourceVersion(o.GetResourceVersion())
	kept.SetCreationTimestamp(o.GetCreationTimestamp())
	for _, field := range []string{"node", "peer", "bgpStatus"} {
		if v, ok, _ := unstructured.NestedString(o.Object, "status", field); ok {
			_ = unstructured.SetNestedField(kept.Object, v, "status", field)
		}
	}
	return kept
}

// identity is who an object is, and its labels.
func identity(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, Labels: m.Labels}
}
