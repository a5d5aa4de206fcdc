package metallb

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// monitoringCache holds the module's own objects of manifests.MonitoringKinds.
// It is made when prometheus-operator's CRDs appear, since a cache's kinds
// must be served when it is made, and stopped when they go: a cluster without
// them costs no watch, and neither change needs a restart.
type monitoringCache struct {
	cache.Cache
	stop chan struct{}
}

// Start runs the cache until the manager stops or the CRDs go.
func (c *monitoringCache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return c.Cache.Start(ctx)
}

// readMonitoring tells whether the monitoring kinds are served and, if they
// are, reads the module's objects of those kinds.
func (r *Reconciler) readMonitoring(ctx context.Context, s *plan.Snapshot) error {
	var err error
	s.MonitoringServed, s.MonitoringPending, err = r.monitoringServed(ctx)
	if err != nil || !s.MonitoringServed {
		r.stopMonitoring()
		return err
	}
	c, err := r.startMonitoring(ctx)
	if err != nil {
		return err
	}
	s.Kinds = slices.Concat(s.Kinds, manifests.MonitoringKinds)
	return listOwned(ctx, c, manifests.MonitoringKinds, s.Owned)
}

// monitoringServed tells whether the monitoring kinds are served: their CRDs
// exist and are not being deleted (the lookup cache holds the metadata of
// every CRD), and the API server
// serves their kinds; or, pending, whether the CRDs exist and their kinds are
// not served yet, which the API server does a moment after the CRDs are
// Established, with no event.
func (r *Reconciler) monitoringServed(ctx context.Context) (served, pending bool, err error) {
	for _, name := range manifests.MonitoringCRDs() {
		crd := objects.Metadata(objects.CustomResourceDefinition)
		err := r.lookup.Get(ctx, client.ObjectKey{Name: name}, crd)
		if apierrors.IsNotFound(err) || (err == nil && crd.DeletionTimestamp != nil) {
			return false, false, nil // a CRD being deleted takes no new object
		}
		if err != nil {
			return false, false, err
		}
	}
	for _, gvk := range manifests.MonitoringKinds {
		_, err := r.manager.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return false, true, nil
		}
		if err != nil {
			return false, false, err
		}
	}
	return true, false, nil
}

// startMonitoring makes the monitoring cache, if there is none, has the
// manager run it, watches its kinds and waits for it to fill.
func (r *Reconciler) startMonitoring(ctx context.Context) (cache.Cache, error) {
	if r.monitoring != nil {
		return r.monitoring.Cache, nil
	}
	byObject := map[client.Object]cache.ByObject{}
	for _, gvk := range manifests.MonitoringKinds {
		byObject[objects.Empty(gvk)] = cache.ByObject{Label: manifests.Ownership.AsSelector(),
			Namespaces: map[string]cache.Config{r.opts.Namespace: {}}, UnsafeDisableDeepCopy: new(true)}
	}
	c, err := cache.New(r.manager.GetConfig(), cache.Options{HTTPClient: r.manager.GetHTTPClient(), Scheme: r.manager.GetScheme(),
		Mapper: r.manager.GetRESTMapper(), ByObject: byObject, DefaultTransform: stripManagedFields})
	if err != nil {
		return nil, fmt.Errorf("caching the monitoring kinds: %w", err)
	}
	mc := &monitoringCache{Cache: c, stop: make(chan struct{})}
	if err := r.manager.Add(mc); err != nil {
		return nil, err
	}
	if err := r.watchMonitoring(ctx, c); err != nil {
		close(mc.stop)
		return nil, err
	}
	r.monitoring = mc
	return c, nil
}

// watchMonitoring has a reconcile follow the module's monitoring objects, so
// that one deleted or edited is restored at once, and waits for c to fill.
func (r *Reconciler) watchMonitoring(ctx context.Context, c cache.Cache) error {
	for _, gvk := range manifests.MonitoringKinds {
		if err := r.controller.Watch(source.Kind(c, client.Object(objects.Empty(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue))); err != nil {
			return fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the cache of the monitoring kinds did not fill")
	}
	return nil
}

// stopMonitoring stops the monitoring cache, if there is one: the CRDs went,
// and the objects with them.
func (r *Reconciler) stopMonitoring() {
	if r.monitoring != nil {
		close(r.monitoring.stop)
		r.monitoring = nil
	}
}

// listOwned adds to owned the objects of kinds that carry the ownership
// labels, as reader holds them.
func listOwned(ctx context.Context, reader client.Reader, kinds []schema.GroupVersionKind, owned map[objects.Key]*unstructured.Unstructured) error {
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := reader.List(ctx, list, client.MatchingLabels(manifests.Ownership)); err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i] // read only: it may be the cache's own
			owned[objects.KeyOf(o)] = o
		}
	}
	return nil
}
