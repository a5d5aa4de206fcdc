package maintenance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

// FieldManager owns the label and the mark maintenance puts on a node, and
// nothing else: applying with neither takes off only what it put.
const FieldManager = "cluster-network-operator-maintenance"

// Reconciler decides over every node at once: one request.
type Reconciler struct {
	client    client.Client // writes Nodes, reads the speakers' pods from the manager's cache
	reader    client.Reader // reads the Nodes' labels and annotations from the API server
	cache     cache.Cache   // the Nodes as nodecache keeps them
	events    recorder.EventRecorder
	namespace string // MetalLB's, where its speakers run

	// scope is nil until the module's first plan: before, nothing is known
	// of the signals, and a restarted operator leaves every node as it is.
	scope   atomic.Pointer[decide.Scope]
	recheck chan event.TypedGenericEvent[struct{}]

	controller       controller.Controller
	watchingSpeakers bool

	mu     sync.Mutex // guards report and told
	report decide.Report
	told   map[string]bool // the held nodes' Events given, by node and why
	// reported is called when the report changes: the module writes it in
	// the MetalLB object's status.
	reported func()
}

var request = reconcile.Request{NamespacedName: types.NamespacedName{Name: "maintenance"}}

// Add registers maintenance's controller; it does nothing until SetScope.
func Add(mgr ctrl.Manager, namespace string, reported func()) (*Reconciler, error) {
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), cache: mgr.GetCache(),
		events: mgr.GetEventRecorder(FieldManager), namespace: namespace, reported: reported,
		recheck: make(chan event.TypedGenericEvent[struct{}], 1), told: map[string]bool{}}
	var err error
	r.controller, err = ctrl.NewControllerManagedBy(mgr).Named("metallb-maintenance").
		WatchesRawSource(source.Channel(r.recheck, handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, struct{}) []reconcile.Request {
			return []reconcile.Request{request}
		}))).
		WithOptions(controller.Options{RateLimiter: transient.RateLimiter()}).
		Build(r)
	return r, err
}

var enqueue = handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{request}
})

// watchSpeakers watches the speakers' readiness from the first time a node
// may need a decision: the manager's cache starts an informer of MetalLB's
// pods then (the MetalLB module's does so too when a rollout may be hung),
// and a cluster that never has a node in maintenance pays nothing for it.
// Reconciles run one at a time: watchingSpeakers is theirs.
func (r *Reconciler) watchSpeakers() error {
	if r.watchingSpeakers {
		return nil
	}
	speakers := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return manifests.SpeakerPods.AsSelector().Matches(labels.Set(o.GetLabels()))
	})
	if err := r.controller.Watch(source.Kind(r.cache, client.Object(&corev1.Pod{}), enqueue, speakers, readinessChanged)); err != nil {
		return fmt.Errorf("watching MetalLB's speakers: %w", err)
	}
	r.watchingSpeakers = true
	return nil
}

// SetScope changes the signals and the advertisements; the nodes are looked
// at again when they changed.
func (r *Reconciler) SetScope(s decide.Scope) {
	if old := r.scope.Swap(&s); old != nil && equality.Semantic.DeepEqual(*old, s) {
		return
	}
	r.Recheck()
}

// Recheck asks for the nodes to be looked at again: one of them changed in
// what maintenance reads (the MetalLB module's watch of the Nodes tells,
// decide.Watched), or the scope did. Its one slot coalesces a burst.
func (r *Reconciler) Recheck() {
	select {
	case r.recheck <- event.TypedGenericEvent[struct{}]{}:
	default: // one is pending: it reads the latest nodes and scope
	}
}

// readinessChanged passes a speaker coming, going, or becoming ready or not.
var readinessChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return status.PodReady(e.ObjectOld.(*corev1.Pod)) != status.PodReady(e.ObjectNew.(*corev1.Pod))
}}
