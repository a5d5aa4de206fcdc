package metallb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

// Reconciler keeps MetalLB as the platform, the user's configuration and the
// MetalLB object ask. Every event maps to one request: each reconcile works
// out the whole desired state from what it reads.
type Reconciler struct {
	client    client.Client // reads owned objects from a label-filtered cache
	lookup    lookupCache   // the metadata of every object of the rendered kinds
	apiReader client.Reader // reads the API server itself, for what no cache holds
	cache     cache.Cache
	events    recorder.EventRecorder
	opts      plan.Options
	clock     clock.PassiveClock
	openshift bool // the Infrastructure API exists
	// apiServerAPI tells that OpenShift's APIServer API exists: its
	// cluster's TLS profile is MetalLB's unless the MetalLB object sets one.
	apiServerAPI bool
	// networkAPI tells that OpenShift's network operator API exists: that
	// operator runs frr-k8s where its Network object asks for it.
	networkAPI bool
	// serviceCIDRAPI tells that the ServiceCIDR API is served: the Service
	// networks a pool must not overlap.
	serviceCIDRAPI bool
	inventory      manifests.Inventory
	rendered       map[objects.Key]bool // what the lookups follow (renderedKeys)
	reporter       publish.Reporter

	manager     ctrl.Manager
	controller  controller.Controller
	nodeAddress *nodeaddress.Module
	maintenance *maintenance.Reconciler
	// maintenanceReported asks for a reconcile: maintenance's report changed.
	maintenanceReported chan event.GenericEvent

	mu       sync.Mutex                       // held by Reconcile: what follows is its own
	watching map[schema.GroupVersionKind]bool // configuration kinds watched
	// everyKind tells that the informers of every rendered kind run, not
	// only the Foundation's (startEveryKind).
	everyKind bool
	// memberlistFound tells whether MetalLB's memberlist Secret was found,
	// read once while only the Foundation's kinds are (readMemberlistFound).
	memberlistFound *bool
	told            map[string]bool // the notices given, of the last plan only
	// monitoring is the cache of the module's monitoring objects while their
	// CRDs exist.
	monitoring *monitoringCache

	// pace tells the time of the statuses' writes, and statusWritten is the
	// last one's: the real time always, the API server's load being real
	// when a test moves the clock of the rollouts.
	pace          clock.PassiveClock
	statusWritten time.Time
	// frrK8sLeftAt is when the last batch of frr-k8s's pods leaving the
	// nodes was deleted; a restarted operator waits as if at its start.
	frrK8sLeftAt time.Time
	// tracked is the tracking last known from the API server (its own last
	// write, or a read after a conflict), for a cache behind it.
	tracked trackingWrite
}

// request is the one request every event maps to.
var request = reconcile.Request{NamespacedName: types.NamespacedName{Name: Name}}

func enqueue(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{request} }

func add(ctx context.Context, mgr ctrl.Manager, opts Options, inv manifests.Inventory, reporter publish.Reporter, nodeAddress *nodeaddress.Module) (*Reconciler, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if reporter.ClusterOperator != nil {
		opts.ClusterOperator = reporter.ClusterOperator.Name
	}
	r := &Reconciler{
		client:       mgr.GetClient(),
		apiReader:    mgr.GetAPIReader(),
		cache:        mgr.GetCache(),
		manager:      mgr,
		events:       mgr.GetEventRecorder(manifests.FieldOwner),
		opts:         opts.Options,
		clock:        opts.Clock,
		inventory:    inv,
		rendered:     renderedKeys(inv),
		reporter:     reporter,
		nodeAddress:  nodeAddress,
		watching:     map[schema.GroupVersionKind]bool{},
		told:         map[string]bool{},
		pace:         clock.RealClock{},
		frrK8sLeftAt: opts.Clock.Now(),

		maintenanceReported: make(chan event.GenericEvent, 1),
	}
	var err error
	for api, kind := range map[*bool]schema.GroupVersionKind{&r.openshift: objects.Infrastructure,
		&r.opts.Environment.SCCAdmission: objects.SecurityContextConstraints, &r.apiServerAPI: objects.APIServer, &r.networkAPI: objects.Network,
		&r.serviceCIDRAPI: objects.ServiceCIDR} {
		if *api, err = served(ctx, mgr, kind); err != nil {
			return nil, err
		}
	}
	r.opts.Environment.OpenShift = r.openshift
	if r.lookup, err = newLookupCache(mgr, inv, opts.Namespace); err != nil {
		return nil, err
	}
	if r.maintenance, err = maintenance.Add(mgr, opts.Namespace, r.maintenanceChanged); err != nil {
		return nil, err
	}
	r.controller, err = r.watches(ctrl.NewControllerManagedBy(mgr)).WithOptions(controller.Options{RateLimiter: transient.RateLimiter()}).Build(r)
	return r, err
}

// maintenanceChanged asks for a reconcile, which reports maintenance's
// report in the MetalLB object's status.
func (r *Reconciler) maintenanceChanged() {
	select {
	case r.maintenanceReported <- event.GenericEvent{}:
	default: // one is pending
	}
}

// served tells whether the API server serves a kind, as the manager's
// discovery finds it at start: discovery that fails on an error that passes
// is tried again until ctx ends.
func served(ctx context.Context, mgr ctrl.Manager, gvk schema.GroupVersionKind) (bool, error) {
	return transient.Served(ctx, mgr.GetLogger(), mgr.GetRESTMapper(), gvk.GroupKind())
}

// Reconcile observes the cluster, plans what to do, does it and reports how
// it went. Reconciles run one at a time: the reconciler remembers the
// notices it gave.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	result, _, err := r.reconcile(ctx)
	return result, err
}

// reconcile is Reconcile; it also tells how long the statuses' writes are
// held back (the result's RequeueAfter comes back to write them).
func (r *Reconciler) reconcile(ctx context.Context) (reconcile.Result, time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.clock.Now()
	s, p, err := r.observeAndPlan(ctx, start)
	if err != nil {
		return reconcile.Result{}, 0, err
	}
	if p.NodeAddress != nil {
		// First: Services handed over to MetalLB lose the node addresses while
		// its controller starts.
		r.nodeAddress.SetScope(*p.NodeAddress)
	}
	if p.Maintenance != nil {
		r.maintenance.SetScope(*p.Maintenance)
	}
	changes, err := r.write(ctx, s, p)
	if err != nil {
		changes = append(changes, r.madeUnanswered(ctx, p, changes)...)
	}
	report := p.Report(err)
	held, publishErr := r.publish(ctx, s, p, report, changes)
	err = errors.Join(p.Failed(err), publishErr)
	ctrl.LoggerFrom(ctx).V(1).Info("reconciled", append(p.LogValues(), "duration", r.clock.Since(start), "statusHeld", held, "error", err)...)
	if err != nil {
		return reconcile.Result{}, held, err // retried with backoff
	}
	if held > 0 && (p.RequeueAfter == 0 || held < p.RequeueAfter) {
		return reconcile.Result{RequeueAfter: held}, held, nil
	}
	return reconcile.Result{RequeueAfter: p.RequeueAfter}, held, nil
}

// observeAndPlan reads the snapshot and plans on it, for the snapshot's time
// (what observe read for). A plan that needs every rendered kind read, and
// not the Foundation's only, has their informers started, and the snapshot
// read again.
func (r *Reconciler) observeAndPlan(ctx context.Context, now time.Time) (*plan.Snapshot, *plan.Plan, error) {
	for {
		s, err := r.observe(ctx, now)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the cluster: %w", err)
		}
		p := plan.Make(s, r.opts, now)
		if !p.ReadEveryKind {
			return s, p, nil
		}
		if err := r.startEveryKind(ctx); err != nil {
			return nil, nil, err
		}
	}
}
