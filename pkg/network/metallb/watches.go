package metallb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodecache"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// watches has every input of the reconcile queue the one request.
func (r *Reconciler) watches(b *builder.Builder) *builder.Builder {
	all := handler.EnqueueRequestsFromMapFunc(enqueue)
	// The priority and runtime classes are watched once the MetalLB object
	// names one (readClasses).
	b = b.Named(Name).Watches(&v1beta1.MetalLB{}, all)
	// Nodes coming and going tell the platform, and whether the cluster has a
	// single node (the node-address mode's default).
	b = b.Watches(&corev1.Node{}, r.nodeEvents())
	if r.opts.Platform == "" && r.openshift {
		b = b.Watches(&configv1.Infrastructure{}, all)
	}
	if r.apiServerAPI {
		b = b.Watches(&configv1.APIServer{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == objects.ClusterConfigName
		}), predicate.GenerationChangedPredicate{}))
	}
	if r.networkAPI { // FRR enabled or not: the frr-k8s backend uses the platform's
		b = b.Watches(objects.Empty(objects.Network), all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == objects.ClusterConfigName
		}), predicate.GenerationChangedPredicate{}))
	}
	if r.reporter.ClusterOperator != nil { // written again once the CVO recreates it
		b = b.Watches(&configv1.ClusterOperator{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == r.opts.ClusterOperator
		})))
	}
	for _, src := range r.kindSources(r.kindsRead()) {
		b = b.WatchesRawSource(src)
	}
	return b.WatchesRawSource(source.Channel(r.maintenanceReported, all))
}

// kindSources are the watches of the rendered kinds given: of every owned
// object, so that a deleted or edited one is restored at once (those of the
// shared kinds with the lookups), and the lookups' (lookupSource).
func (r *Reconciler) kindSources(kinds []schema.GroupVersionKind) []source.Source {
	var sources []source.Source
	for _, gvk := range kinds {
		switch {
		case gvk == objects.DaemonSet:
			sources = append(sources, source.Kind(r.cache, client.Object(objects.Empty(gvk)), statusPaced(StatusEvery)))
		case !r.lookup.shared[gvk]:
			sources = append(sources, source.Kind(r.cache, client.Object(objects.Empty(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue)))
		}
		sources = append(sources, r.lookupSource(gvk))
	}
	return sources
}

// findingSources are the watches of what the findings read beyond MetalLB's
// objects, once a plan needs every kind, and the objects of their kinds: the
// Service networks, and kube-proxy's configuration (with the lookups' watch
// of ConfigMaps); a DaemonSet's pod refused (its pods created again show in
// its status); a Service a speaker could not announce.
func (r *Reconciler) findingSources() ([]client.Object, []source.Source) {
	all := handler.EnqueueRequestsFromMapFunc(enqueue)
	objs := []client.Object{&corev1.Event{}}
	sources := []source.Source{source.Kind(r.cache, client.Object(&corev1.Event{}), all, predicate.NewPredicateFuncs(func(o client.Object) bool {
		reason := o.(*corev1.Event).Reason
		return reason == reasonFailedCreate || reason == explain.ReasonAnnounceFailed
	}))}
	if r.serviceCIDRAPI {
		objs = append(objs, &networkingv1.ServiceCIDR{})
		sources = append(sources, source.Kind(r.cache, client.Object(&networkingv1.ServiceCIDR{}), all))
	}
	return objs, sources
}

// kindsRead are the rendered kinds whose informers run: the Foundation's
// until a plan needs every kind (startEveryKind).
func (r *Reconciler) kindsRead() []schema.GroupVersionKind {
	if r.everyKind {
		return r.inventory.Kinds
	}
	return slices.DeleteFunc(slices.Clone(r.inventory.Kinds), func(gvk schema.GroupVersionKind) bool { return !plan.IsFoundation(gvk) })
}

// startEveryKind starts the informers of the rendered kinds beyond the
// Foundation's, of what the checks read whole, and of the findings'
// (findingSources), all at once, waits for them to fill, and has the
// controller watch them: the plan asked for every kind
// (plan.Plan.ReadEveryKind). They run from then on.
func (r *Reconciler) startEveryKind(ctx context.Context) error {
	var rest []schema.GroupVersionKind
	g, gctx := errgroup.WithContext(ctx)
	for _, gvk := range r.inventory.Kinds {
		if plan.IsFoundation(gvk) {
			continue
		}
		rest = append(rest, gvk)
		g.Go(func() error { return startInformer(gctx, r.cache, objects.Empty(gvk)) })
		if !r.lookup.shared[gvk] {
			g.Go(func() error { return startInformer(gctx, r.lookup, objects.Metadata(gvk)) })
		}
	}
	findings, sources := r.findingSources()
	for _, o := range slices.Concat(typedConfigObjects(), findings) {
		g.Go(func() error { return ignoreNoMatch(startInformer(gctx, r.cache, o)) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("starting the informers of every rendered kind: %w", err)
	}
	for _, src := range slices.Concat(r.kindSources(rest), sources) {
		if err := r.controller.Watch(src); err != nil {
			return err
		}
	}
	r.everyKind = true
	return nil
}

// startInformer starts the informer of an object's kind and waits until it
// has filled, looking every syncPoll: the cache's own wait looks every 100
// ms, which the first activation waited for (startEveryKind).
func startInformer(ctx context.Context, c cache.Informers, o client.Object) error {
	informer, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, syncPoll, true, func(context.Context) (bool, error) { return informer.HasSynced(), nil })
}

const syncPoll = 5 * time.Millisecond

// statusPaced asks for a reconcile at once when a DaemonSet comes, goes, or
// changes in what it is (its spec, labels or annotations), and, when only its
// status changed, after `after`: during a rollout the DaemonSet controller writes
// a speaker DaemonSet's status for nearly every pod, some ten times a second on
// 2,000 nodes, and the status a reconcile reports is written at most every
// StatusEvery anyway. A rollout is then some two reconciles a second, whatever
// its nodes, and the last speaker's readiness reported at most `after` late.
func statusPaced(after time.Duration) handler.EventHandler {
	now := func(q requestQueue) { q.Add(request) }
	return handler.Funcs{
		CreateFunc: func(_ context.Context, _ event.CreateEvent, q requestQueue) { now(q) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q requestQueue) {
			if statusOnly(e.ObjectOld, e.ObjectNew) {
				q.AddAfter(request, after)
				return
			}
			now(q)
		},
		DeleteFunc:  func(_ context.Context, _ event.DeleteEvent, q requestQueue) { now(q) },
		GenericFunc: func(_ context.Context, _ event.GenericEvent, q requestQueue) { now(q) },
	}
}

type requestQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// statusOnly tells whether an update changed nothing but the object's status:
// the spec's changes bump the generation.
func statusOnly(old, updated client.Object) bool {
	return old.GetGeneration() == updated.GetGeneration() && updated.GetDeletionTimestamp() == nil &&
		maps.Equal(old.GetLabels(), updated.GetLabels()) && maps.Equal(old.GetAnnotations(), updated.GetAnnotations())
}

// nodeEvents is the one watch of the Nodes, for the module and for node
// maintenance (one handler of the informer, not two): a Node coming or
// going, its provider ID or what the preflight checks read changing, asks for
// a reconcile (the platform, the count of nodes, the findings); a change that
// maintenance reads asks it to look again.
// The status updates every node makes go no further.
func (r *Reconciler) nodeEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, _ event.CreateEvent, q requestQueue) {
			q.Add(request)
			r.maintenance.Recheck()
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q requestQueue) {
			old, updated := e.ObjectOld.(*nodecache.Node), e.ObjectNew.(*nodecache.Node)
			if old.ProviderID != updated.ProviderID || !old.Preflight.Equal(updated.Preflight) {
				q.Add(request)
			}
			if !old.Maintenance.Equal(updated.Maintenance) {
				r.maintenance.Recheck()
			}
		},
		DeleteFunc: func(_ context.Context, _ event.DeleteEvent, q requestQueue) {
			q.Add(request)
			r.maintenance.Recheck()
		},
	}
}

// watchConfigs watches the configuration kinds, and MetalLB's reports on
// them, once their CRDs exist; watching a kind that is not served would fail
// the controller. Of the configuration, its creation and deletion matter
// (whether MetalLB is asked for), and changes of spec or labels (what the
// advertisements select); of the reports, their result. What the checks read
// whole, and the reports, are watched once every rendered kind's informers
// run (startEveryKind): before, nothing reads them.
func (r *Reconciler) watchConfigs() error {
	for _, gvk := range manifests.ConfigKinds {
		err := r.watchOnce(gvk, func() source.Source {
			return source.Kind(r.cache, client.Object(objects.Metadata(gvk)), handler.EnqueueRequestsFromMapFunc(enqueue), specOrLabelsChanged)
		})
		if err != nil {
			return err
		}
	}
	if !r.everyKind {
		return nil // what follows, once a plan needs more than the Foundation (startEveryKind)
	}
	// What the checks read of the pools, advertisements and BGPPeers comes
	// from their typed informers, which may fill after the metadata ones
	// asked for the reconcile: their changes ask for one too.
	typed := map[schema.GroupVersionKind]client.Object{manifests.IPAddressPoolKind: &metallbv1beta1.IPAddressPool{},
		manifests.L2AdvertisementKind: &metallbv1beta1.L2Advertisement{}, manifests.BGPAdvertisementKind: &metallbv1beta1.BGPAdvertisement{},
		manifests.BGPPeerKind: &metallbv1beta2.BGPPeer{}}
	for gvk, o := range typed {
		key := gvk
		key.Kind += " (typed)"
		err := r.watchOnce(key, func() source.Source {
			return source.Kind(r.cache, o, handler.EnqueueRequestsFromMapFunc(enqueue), specOrLabelsChanged)
		})
		if err != nil {
			return err
		}
	}
	// MetalLB's CRDs before v0.16 lack ConfigurationStates: watched once the
	// module's are applied.
	err := r.watchServed(manifests.ConfigurationStateKind, func() source.Source {
		return source.Kind(r.cache, &metallbv1beta1.ConfigurationState{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o *metallbv1beta1.ConfigurationState) []reconcile.Request {
				return enqueue(ctx, o)
			}), resultChanged)
	})
	if err != nil {
		return err
	}
	// frr-k8s's sessions, where it runs.
	return r.watchServed(manifests.BGPSessionStateKind, func() source.Source {
		return source.Kind(r.cache, client.Object(objects.Empty(manifests.BGPSessionStateKind)), handler.EnqueueRequestsFromMapFunc(enqueue),
			sessionStateChanged)
	})
}

// watchServed watches a kind with watchOnce once the API server serves it.
func (r *Reconciler) watchServed(gvk schema.GroupVersionKind, newSource func() source.Source) error {
	if r.watching[gvk] {
		return nil
	}
	if _, err := r.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		return ignoreNoMatch(err)
	}
	return r.watchOnce(gvk, newSource)
}

// sessionStateChanged drops the updates of a BGPSessionState that leave its
// BGP state as it was (frr-k8s reports BFD's in it too).
var sessionStateChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	state := func(o client.Object) string {
		u, _ := o.(*unstructured.Unstructured)
		if u == nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(u.Object, "status", "bgpStatus")
		return v
	}
	return state(e.ObjectOld) != state(e.ObjectNew)
}}

// watchOnce has the controller watch a kind from the first call on, with the
// source newSource makes then: reconciles call it, and build nothing again.
func (r *Reconciler) watchOnce(gvk schema.GroupVersionKind, newSource func() source.Source) error {
	if r.watching[gvk] {
		return nil
	}
	if err := r.controller.Watch(newSource()); err != nil {
		return fmt.Errorf("watching %s: %w", gvk.Kind, err)
	}
	r.watching[gvk] = true
	return nil
}

// specOrLabelsChanged drops the updates that change neither the spec (the
// generation) nor the labels.
var specOrLabelsChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})

// resultChanged drops the updates of a report that leave its result as it was.
var resultChanged = predicate.TypedFuncs[*metallbv1beta1.ConfigurationState]{
	UpdateFunc: func(e event.TypedUpdateEvent[*metallbv1beta1.ConfigurationState]) bool {
		return e.ObjectOld.Status.Result != e.ObjectNew.Status.Result || e.ObjectOld.Status.ErrorSummary != e.ObjectNew.Status.ErrorSummary
	},
}
