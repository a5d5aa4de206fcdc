package nodeaddress

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

// FieldManager owns what the mode writes in Services' status, and nothing
// else: applying with none of it removes only what the mode wrote.
const FieldManager = "cluster-network-operator-node-address"

// Reconciler keeps the status of each LoadBalancer Service the mode serves:
// one request per Service. Its cache of Services, EndpointSlices and Nodes,
// and the controller that reads it, exist only while the scope has the mode
// enabled (Start): a cluster that does not use the mode pays nothing for it.
type Reconciler struct {
	own    *modeCache    // the running mode's (run)
	reader client.Reader // the API server, for the sweep while the mode is off
	client client.Client
	events recorder.EventRecorder
	// newCache makes the mode's own cache, and controller its controller's
	// options, for each time it runs.
	newCache   func(context.Context) (*modeCache, error)
	controller controller.Options

	// scope is nil until the module's first plan: before, nothing is known
	// of what to serve, and a restarted operator must not take away what the
	// last one wrote.
	scope atomic.Pointer[decide.Scope]
	// switched tells Start that the scope changed whether the mode runs.
	switched chan struct{}
	// recheck asks for every Service: the scope or a node changed. Its one
	// slot coalesces a burst (thousands of nodes at start) into one pass.
	recheck chan event.TypedGenericEvent[struct{}]

	mu       sync.Mutex // guards eligible
	eligible *eligibleNodes
	nodesGen atomic.Uint64 // bumped by every Node change that counts
}

type eligibleNodes struct {
	gen         uint64
	addressType string
	nodes       []decide.Node
}

// add registers the mode with the manager; it does nothing until SetScope
// says what it may serve.
func add(mgr ctrl.Manager) (*Reconciler, error) {
	r := &Reconciler{reader: mgr.GetAPIReader(), client: mgr.GetClient(),
		events: mgr.GetEventRecorder(FieldManager), switched: make(chan struct{}, 1),
		recheck: make(chan event.TypedGenericEvent[struct{}], 1)}
	r.newCache = func(ctx context.Context) (*modeCache, error) {
		return newCache(ctx, mgr.GetConfig(), cache.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	}
	// Started and stopped with the mode, so its name is not checked for
	// uniqueness.
	r.controller = controller.Options{Reconciler: r, Logger: mgr.GetLogger(), SkipNameValidation: new(true),
		UsePriorityQueue: mgr.GetControllerOptions().UsePriorityQueue, RateLimiter: transient.RateLimiter()}
	return r, mgr.Add(r)
}

// newController is the mode's controller over its cache c.
func (r *Reconciler) newController(c cache.Cache) (controller.Controller, error) {
	ctl, err := controller.NewUnmanaged("node-address", r.controller)
	if err != nil {
		return nil, err
	}
	for _, src := range []source.Source{
		source.Kind(c, &corev1.Service{}, r.serviceHandler()),
		source.Kind(c, &discoveryv1.EndpointSlice{}, r.endpointsHandler()),
		source.Kind(c, &corev1.Node{}, r.nodeHandler()),
		source.Channel(r.recheck, handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ struct{}) []reconcile.Request {
			return r.allServices(ctx)
		})),
	} {
		if err := ctl.Watch(src); err != nil {
			return nil, err
		}
	}
	return ctl, nil
}

// SetScope changes what the mode serves; every Service is looked at again
// when it changed, and the mode starts or stops when it is enabled or not.
func (r *Reconciler) SetScope(s decide.Scope) {
	old := r.scope.Swap(&s)
	if old == nil || old.Enabled != s.Enabled {
		select {
		case r.switched <- struct{}{}:
		default: // one is pending: Start reads the latest scope
		}
	}
	if old == nil || *old != s {
		r.recheckAll()
	}
}

func (r *Reconciler) recheckAll() {
	select {
	case r.recheck <- event.TypedGenericEvent[struct{}]{}:
	default: // one is pending: it will look at every Service too
	}
}

type serviceQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// serviceHandler asks for the Service itself, and, when it leaves or changes
// its ports or what it holds, for the Services that share a port with it: one
// of them may win what it held, or lose what it now holds. A new Service
// takes nothing from those created before it, only from those of the same
// second whose UID is greater: at the same second the lesser UID counts as
// the older (decide.Older).
func (r *Reconciler) serviceHandler() handler.TypedEventHandler[*corev1.Service, reconcile.Request] {
	return handler.TypedFuncs[*corev1.Service, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*corev1.Service], q serviceQueue) {
			q.Add(requestFor(e.Object))
			r.addSharers(ctx, q, e.Object, func(s *corev1.Service) bool {
				return s.CreationTimestamp.Equal(&e.Object.CreationTimestamp)
			})
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*corev1.Service], q serviceQueue) {
			q.Add(requestFor(e.ObjectNew))
			// Its spec, or what it holds (the cache's mark of who wrote its
			// ingress).
			o, n := e.ObjectOld, e.ObjectNew
			if !equality.Semantic.DeepEqual(o.Spec, n.Spec) || decide.Mark(o) != decide.Mark(n) {
				r.addSharers(ctx, q, o, all)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*corev1.Service], q serviceQueue) {
			r.addSharers(ctx, q, e.Object, all)
		},
	}
}

func all(*corev1.Service) bool { return true }

// endpointsHandler asks for the Service of a slice whose nodes or readiness
// changed, and, for a Local-policy Service, whose addresses follow them, for
// the Services that share a port with it.
func (r *Reconciler) endpointsHandler() handler.TypedEventHandler[*discoveryv1.EndpointSlice, reconcile.Request] {
	enqueue := func(ctx context.Context, s *discoveryv1.EndpointSlice, q serviceQueue) {
		key := types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}
		if key.Name == "" {
			return
		}
		q.Add(reconcile.Request{NamespacedName: key})
		svc := &corev1.Service{}
		if r.own.Get(ctx, key, svc) == nil && decide.Local(svc) {
			r.addSharers(ctx, q, svc, all)
		}
	}
	return handler.TypedFuncs[*discoveryv1.EndpointSlice, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*discoveryv1.EndpointSlice], q serviceQueue) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*discoveryv1.EndpointSlice], q serviceQueue) {
			if !equality.Semantic.DeepEqual(e.ObjectOld.Endpoints, e.ObjectNew.Endpoints) {
				enqueue(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*discoveryv1.EndpointSlice], q serviceQueue) {
			enqueue(ctx, e.Object, q)
		},
	}
}

// nodeHandler has every Service looked at again when a node comes, goes, or
// changes what the mode reads of it, and not for the status updates every
// node makes every few seconds.
func (r *Reconciler) nodeHandler() handler.TypedEventHandler[*corev1.Node, reconcile.Request] {
	changed := func() {
		r.nodesGen.Add(1)
		r.recheckAll()
	}
	return handler.TypedFuncs[*corev1.Node, reconcile.Request]{
		CreateFunc: func(context.Context, event.TypedCreateEvent[*corev1.Node], serviceQueue) { changed() },
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*corev1.Node], _ serviceQueue) {
			o, n := e.ObjectOld, e.ObjectNew
			if status.NodeReady(o) != status.NodeReady(n) || !equality.Semantic.DeepEqual(o.Status.Addresses, n.Status.Addresses) ||
				!equality.Semantic.DeepEqual(o.Labels, n.Labels) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				changed()
			}
		},
		DeleteFunc: func(context.Context, event.TypedDeleteEvent[*corev1.Node], serviceQueue) { changed() },
	}
}

// allServices asks for every LoadBalancer Service.
func (r *Reconciler) allServices(ctx context.Context) []reconcile.Request {
	var list corev1.ServiceList
	if err := r.own.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Services")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.Type == corev1.ServiceTypeLoadBalancer {
			out = append(out, requestFor(&list.Items[i]))
		}
	}
	return out
}

// addSharers asks for the Services that take one of the Service's ports, of
// those that pass.
func (r *Reconciler) addSharers(ctx context.Context, q serviceQueue, svc *corev1.Service, pass func(*corev1.Service) bool) {
	sharers, err := r.sharers(svc)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Services by port")
		return
	}
	for _, s := range sharers {
		if pass(s) {
			q.Add(requestFor(s))
		}
	}
}

func requestFor(svc *corev1.Service) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}}
}
