package metallb

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// lookupCache holds the metadata of every object of the kinds the module
// renders, its own or not (in MetalLB's namespace for namespaced kinds): the
// lookups of objects another installation created cost no request, and their
// appearing or going is an event. Of the kinds sharedKinds names it holds
// nothing: their lookups read the owned cache, which holds every object of
// them (see cacheByObject).
type lookupCache struct {
	cache.Cache
	owned  client.Reader // the manager's cache
	shared map[schema.GroupVersionKind]bool
}

// GetCache has the manager start the cache with its own, before the
// controllers, and wait for it to fill.
func (c lookupCache) GetCache() cache.Cache { return c.Cache }

func newLookupCache(mgr manager.Manager, inv manifests.Inventory, namespace string) (lookupCache, error) {
	shared := sharedKinds(inv)
	byObject := map[client.Object]cache.ByObject{}
	for _, gvk := range inv.Kinds {
		if shared[gvk] {
			continue
		}
		by := cache.ByObject{}
		// DaemonSets everywhere: another MetalLB's speakers, in any namespace,
		// would answer for the same addresses (a cluster has few DaemonSets).
		if inv.Namespaced[gvk] && gvk != objects.DaemonSet {
			by.Namespaces = map[string]cache.Config{namespace: {}}
		}
		byObject[objects.Metadata(gvk)] = by
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: byObject, DefaultTransform: lookupOnly,
		// A lookup of a kind it was not made for would start an informer.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return lookupCache{}, err
	}
	lc := lookupCache{Cache: c, owned: mgr.GetCache(), shared: shared}
	return lc, mgr.Add(lc)
}

// Get reads an object's metadata, from the owned cache for a shared kind.
func (c lookupCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || !c.shared[m.GroupVersionKind()] {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	u := objects.Empty(m.GroupVersionKind())
	if err := c.owned.Get(ctx, key, u, opts...); err != nil {
		return err
	}
	return copyMetadata(u, m)
}

// List lists objects' metadata, from the owned cache for a shared kind.
func (c lookupCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return c.Cache.List(ctx, list, opts...)
	}
	gvk := l.GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if !c.shared[gvk] {
		return c.Cache.List(ctx, list, opts...)
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(l.GroupVersionKind())
	if err := c.owned.List(ctx, u, opts...); err != nil {
		return err
	}
	l.Items = make([]metav1.PartialObjectMetadata, len(u.Items))
	for i := range u.Items {
		l.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
		if err := copyMetadata(&u.Items[i], &l.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// copyMetadata copies an unstructured object's metadata into m.
func copyMetadata(u *unstructured.Unstructured, m *metav1.PartialObjectMetadata) error {
	meta, _ := u.Object["metadata"].(map[string]any)
	m.ObjectMeta = metav1.ObjectMeta{}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(meta, &m.ObjectMeta)
}

// lookupOnly keeps of an object what the foreign check and its messages
// read: who it is, its labels, its owners, the names of its field managers,
// whether it is being deleted, and the annotations of adoption and of Helm's
// release; the rest (a
// client-side apply's annotation of a whole CRD, above all) would cost memory
// for nothing.
func lookupOnly(obj any) (any, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	kept := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion,
		Labels: o.Labels, OwnerReferences: o.OwnerReferences, DeletionTimestamp: o.DeletionTimestamp}
	for _, key := range []string{manifests.AdoptAnnotation, plan.HelmReleaseNameAnnotation, plan.HelmReleaseNamespaceAnnotation} {
		if v, ok := o.Annotations[key]; ok {
			if kept.Annotations == nil {
				kept.Annotations = map[string]string{}
			}
			kept.Annotations[key] = v
		}
	}
	for _, m := range o.ManagedFields {
		kept.ManagedFields = append(kept.ManagedFields, metav1.ManagedFieldsEntry{Manager: m.Manager, Operation: m.Operation})
	}
	return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: kept}, nil
}

// lookupSource has a reconcile follow what happens to the objects of a
// rendered kind at the rendered names that are not the module's, and to
// MetalLB's workloads of other names: another installation's objects
// appearing, changing hands or going; and to the CRDs of the monitoring
// kinds. A shared kind's one watch follows the module's own objects too.
func (r *Reconciler) lookupSource(gvk schema.GroupVersionKind) source.Source {
	isOwned := func(o client.Object) bool { return manifests.Owned(o.GetLabels()) }
	relevant := func(o client.Object) bool {
		key := objects.Key{GroupKind: gvk.GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
		return r.rendered[key] || manifests.ComponentOf(o.GetLabels()) != ""
	}
	if r.lookup.shared[gvk] {
		// kube-proxy's configuration too, the one ConfigMap of kube-system
		// the cache holds: the preflight checks read it.
		return source.Kind(r.cache, client.Object(objects.Empty(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue),
			predicate.NewPredicateFuncs(func(o client.Object) bool { return isOwned(o) || relevant(o) || isKubeProxyConfig(o) }))
	}
	foreign := predicate.NewPredicateFuncs(func(o client.Object) bool { return relevant(o) && !isOwned(o) })
	return source.Kind(r.lookup.Cache, client.Object(objects.Metadata(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue), foreign)
}

// renderedKeys are the keys of the objects the module renders, and of
// prometheus-operator's CRDs, whose appearing or going turns the monitoring
// objects on or off: what the lookups follow.
func renderedKeys(inv manifests.Inventory) map[objects.Key]bool {
	rendered := map[objects.Key]bool{}
	for _, o := range inv.Objects {
		rendered[objects.KeyOf(o)] = true
	}
	for _, name := range manifests.MonitoringCRDs() {
		rendered[objects.Key{GroupKind: objects.CustomResourceDefinition.GroupKind(), Name: name}] = true
	}
	return rendered
}
