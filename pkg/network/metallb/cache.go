package metallb

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// ConfigureManager sets the manager options the module needs. The cache holds,
// of the kinds the module owns, only its own objects (not every Secret or Role
// of the cluster), and of Nodes only what tells the platform; the module reads
// what it owns as unstructured objects, from that cache too.
func ConfigureManager(opts *manager.Options, env Environment) error {
	byObject, err := cacheByObject(env)
	if err != nil {
		return err
	}
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	maps.Copy(opts.Cache.ByObject, byObject)
	if opts.Cache.DefaultTransform == nil {
		// Nothing the module decides reads managedFields, which for a CRD
		// are as large as its schema.
		opts.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}
	if opts.Client.Cache == nil {
		opts.Client.Cache = &client.CacheOptions{}
	}
	opts.Client.Cache.Unstructured = true
	return nil
}

func cacheByObject(env Environment) (map[client.Object]cache.ByObject, error) {
	inv, err := inventoryOf(env)
	if err != nil {
		return nil, err
	}
	selector := ownership.AsSelector()
	byObject := map[client.Object]cache.ByObject{
		// Read from the informer's store (nodeProviders), never copied.
		&corev1.Node{}: {Transform: nodePlatformOnly},
		// MetalLB's pods, to name the nodes of a hung rollout.
		&corev1.Pod{}: {Label: metallbPods.AsSelector(), Namespaces: map[string]cache.Config{env.Namespace: {}}, Transform: podReadinessOnly},
	}
	for _, gvk := range inv.kinds {
		// Every reconcile reads them all, the CRDs (hundreds of kilobytes) among
		// them; the module only reads them, so the cache need not copy them.
		by := cache.ByObject{Label: selector, UnsafeDisableDeepCopy: new(true)}
		if inv.namespaced[gvk] {
			// Only MetalLB's namespace: the operator may read its Secrets and the
			// like there and nowhere else.
			by.Namespaces = map[string]cache.Config{env.Namespace: {}}
		}
		byObject[emptyObject(gvk)] = by
	}
	return byObject, nil
}

// nodePlatformOnly keeps of a Node its name and provider ID: the rest, status
// and image lists above all, would cost memory for nothing.
func nodePlatformOnly(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		TypeMeta:   n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion},
		Spec:       corev1.NodeSpec{ProviderID: n.Spec.ProviderID},
	}, nil
}

// podReadinessOnly keeps of a MetalLB pod what names a hung rollout's nodes:
// its node and whether it is ready. A speaker runs on every node: whole pods
// would cost memory in step with the cluster's size.
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
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			kept.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return kept, nil
}
