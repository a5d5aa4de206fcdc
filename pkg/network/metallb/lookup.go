package metallb

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/builder"
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
// appearing or going is an event. The owned cache cannot hold them: it keeps
// whole objects, of the module's own only.
type lookupCache struct{ cache.Cache }

// GetCache has the manager start the cache with its own, before the
// controllers, and wait for it to fill.
func (c lookupCache) GetCache() cache.Cache { return c.Cache }

func newLookupCache(mgr manager.Manager, inv manifests.Inventory, namespace string) (lookupCache, error) {
	byObject := map[client.Object]cache.ByObject{}
	for _, gvk := range inv.Kinds {
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
	})
	if err != nil {
		return lookupCache{}, err
	}
	lc := lookupCache{c}
	return lc, mgr.Add(lc)
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

// watchLookups has a reconcile follow what happens to the objects of the
// rendered names that are not the module's, and to MetalLB's workloads of
// other names: another installation's objects appearing, changing hands or
// going; and to the CRDs of the monitoring kinds.
func watchLookups(b *builder.Builder, c lookupCache, inv manifests.Inventory) *builder.Builder {
	rendered := map[objects.Key]bool{}
	for _, o := range inv.Objects {
		rendered[objects.KeyOf(o)] = true
	}
	// prometheus-operator's CRDs appearing or going turn the monitoring
	// objects on or off.
	for _, name := range manifests.MonitoringCRDs() {
		rendered[objects.Key{GroupKind: objects.CustomResourceDefinition.GroupKind(), Name: name}] = true
	}
	owned := manifests.Ownership.AsSelector()
	for _, gvk := range inv.Kinds {
		relevant := predicate.NewPredicateFuncs(func(o client.Object) bool {
			key := objects.Key{GroupKind: gvk.GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
			return (rendered[key] || manifests.ComponentOf(o.GetLabels()) != "") && !owned.Matches(labels.Set(o.GetLabels()))
		})
		b = b.WatchesRawSource(source.Kind(c.Cache, client.Object(objects.Metadata(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue), relevant))
	}
	return b
}
