package metallb

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
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

func newLookupCache(mgr manager.Manager, inv inventory, namespace string) (lookupCache, error) {
	byObject := map[client.Object]cache.ByObject{}
	for _, gvk := range inv.kinds {
		by := cache.ByObject{}
		// DaemonSets everywhere: another MetalLB's speakers, in any namespace,
		// would answer for the same addresses (a cluster has few DaemonSets).
		if inv.namespaced[gvk] && gvk != daemonSetKind {
			by.Namespaces = map[string]cache.Config{namespace: {}}
		}
		byObject[metadataObject(gvk)] = by
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
// and the annotations of adoption and of Helm's release; the rest (a
// client-side apply's annotation of a whole CRD, above all) would cost memory
// for nothing.
func lookupOnly(obj any) (any, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	kept := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion,
		Labels: o.Labels, OwnerReferences: o.OwnerReferences}
	for _, key := range []string{AdoptAnnotation, helmReleaseNameAnnotation, helmReleaseNamespaceAnnotation} {
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
// going.
func watchLookups(b *builder.Builder, c lookupCache, inv inventory) *builder.Builder {
	rendered := map[apply.Key]bool{}
	for _, o := range inv.objects {
		rendered[apply.KeyOf(o)] = true
	}
	owned := ownership.AsSelector()
	for _, gvk := range inv.kinds {
		relevant := predicate.NewPredicateFuncs(func(o client.Object) bool {
			key := apply.Key{GroupKind: gvk.GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
			return (rendered[key] || metallbComponent(o.GetLabels()) != "") && !owned.Matches(labels.Set(o.GetLabels()))
		})
		b = b.WatchesRawSource(source.Kind(c.Cache, client.Object(metadataObject(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue), relevant))
	}
	return b
}

// readForeign looks up, in the lookup cache, the objects the module renders
// that the owned ones lack: those that exist were created by someone else.
// The namespace is shared, and never foreign; it is read for the adoption
// annotation, from the cache whose events the reconcile follows for it: the
// owned one if it is owned, else the lookup cache (the other may lag).
func (r *Reconciler) readForeign(ctx context.Context, s *Snapshot) error {
	var missing []*unstructured.Unstructured
	for _, o := range r.inventory.objects {
		if o.GetKind() != namespaceKind.Kind && s.Owned[apply.KeyOf(o)] == nil {
			missing = append(missing, o)
		}
	}
	var err error
	s.Foreign, err = apply.FindForeign(ctx, r.lookup, missing, ownership)
	if err != nil {
		return err
	}
	if owned := s.owned(namespaceKind, "", r.opts.Namespace); owned != nil {
		s.AdoptionAllowed = owned.GetAnnotations()[AdoptAnnotation] == "true"
		return nil
	}
	ns := metadataObject(namespaceKind)
	err = r.lookup.Get(ctx, types.NamespacedName{Name: r.opts.Namespace}, ns)
	s.AdoptionAllowed = err == nil && ns.Annotations[AdoptAnnotation] == "true"
	return client.IgnoreNotFound(err)
}

// readWorkloads lists MetalLB's workloads, whoever installed them, from the
// lookup cache: it holds every DaemonSet, and the Deployments of MetalLB's
// namespace. Their component label must match their kind (workloads names
// both).
func (r *Reconciler) readWorkloads(ctx context.Context, s *Snapshot) error {
	for _, w := range metallbWorkloads {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(w.kind.GroupVersion().WithKind(w.kind.Kind + "List"))
		if err := r.lookup.List(ctx, list); err != nil {
			return fmt.Errorf("listing %s: %w", w.kind.Kind, err)
		}
		for i := range list.Items {
			if o := &list.Items[i]; metallbComponent(o.Labels) == w.name {
				o.SetGroupVersionKind(w.kind)
				s.Workloads = append(s.Workloads, o)
			}
		}
	}
	return nil
}

// readMemberlistKeys reads which keys the memberlist Secret holds while it is
// another installation's: the lookups keep no data. It is read from the API
// server by a list of that one name, a read the operator is granted in
// MetalLB's namespace (it may get no Secret), and only then.
func (r *Reconciler) readMemberlistKeys(ctx context.Context, s *Snapshot) error {
	if !slices.ContainsFunc(s.Foreign, func(f apply.Foreign) bool {
		return f.Object.GetKind() == secretKind.Kind && f.Object.GetName() == memberlistSecret
	}) {
		return nil
	}
	var list corev1.SecretList
	err := r.apiReader.List(ctx, &list, client.InNamespace(r.opts.Namespace), client.MatchingFields{"metadata.name": memberlistSecret})
	if err != nil || len(list.Items) == 0 {
		return err // one gone since the lookup is no longer foreign: its event brings a reconcile
	}
	s.MemberlistKeys = slices.Sorted(maps.Keys(list.Items[0].Data))
	if s.MemberlistKeys == nil {
		s.MemberlistKeys = []string{}
	}
	return nil
}

func metadataObject(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(gvk)
	return o
}
