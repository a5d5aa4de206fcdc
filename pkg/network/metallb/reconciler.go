package metallb

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Options are the module's settings from the operator's flags and environment.
type Options struct {
	Environment
	// Platform overrides the detected platform when set.
	Platform string
	// AllowedPlatforms are the platforms MetalLB is deployed on.
	AllowedPlatforms []string
	// HungAfter is how long a rollout may make no progress before it is
	// reported hung.
	HungAfter time.Duration
	// ClusterOperator names the ClusterOperator the status is written to, when
	// that API exists.
	ClusterOperator string
	// Clock tells the time; nil is the real one.
	Clock clock.PassiveClock
}

// Reconciler keeps MetalLB as the platform, the user's configuration and the
// tuning object ask. Every event maps to one request: each reconcile works out
// the whole desired state from what it reads.
type Reconciler struct {
	client    client.Client // reads owned objects from a label-filtered cache
	lookup    lookupCache   // the metadata of every object of the rendered kinds
	apiReader client.Reader // reads the API server itself, for what no cache holds
	cache     cache.Cache
	events    recorder.EventRecorder
	opts      Options
	clock     clock.PassiveClock
	openshift bool // the Infrastructure API exists
	inventory inventory

	clusterOperator *status.ClusterOperator // nil where that API does not exist
	controller      controller.Controller
	nodeAddress     *nodeaddress.Reconciler

	mu       sync.Mutex                       // held by Reconcile: what follows is its own
	watching map[schema.GroupVersionKind]bool // configuration kinds watched
	told     map[string]bool                  // the notices given, of the last plan only
}

// request is the one request every event maps to.
var request = reconcile.Request{NamespacedName: types.NamespacedName{Name: "metallb"}}

func enqueue(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{request} }

// Add registers the MetalLB module with the manager, whose options went
// through ConfigureManager.
func Add(mgr ctrl.Manager, opts Options) error {
	_, err := add(mgr, opts)
	return err
}

func add(mgr ctrl.Manager, opts Options) (*Reconciler, error) {
	inv, err := inventoryOf(opts.Environment)
	if err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	mapper := mgr.GetRESTMapper()
	_, err = mapper.RESTMapping(configv1.GroupVersion.WithKind("Infrastructure").GroupKind())
	r := &Reconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		cache:     mgr.GetCache(),
		events:    mgr.GetEventRecorder(FieldOwner),
		opts:      opts,
		clock:     opts.Clock,
		openshift: err == nil,
		inventory: inv,
		watching:  map[schema.GroupVersionKind]bool{},
		told:      map[string]bool{},
	}
	if r.lookup, err = newLookupCache(mgr, inv, opts.Namespace); err != nil {
		return nil, err
	}
	if _, err := mapper.RESTMapping(configv1.GroupVersion.WithKind("ClusterOperator").GroupKind()); err == nil && opts.ClusterOperator != "" {
		r.clusterOperator = &status.ClusterOperator{Client: mgr.GetClient(), Name: opts.ClusterOperator, Clock: opts.Clock}
	}
	if r.nodeAddress, err = nodeaddress.Add(mgr); err != nil {
		return nil, err
	}
	r.controller, err = r.watches(ctrl.NewControllerManagedBy(mgr)).Build(r)
	return r, err
}

// watches has every input of the reconcile queue the one request.
func (r *Reconciler) watches(b *builder.Builder) *builder.Builder {
	all := handler.EnqueueRequestsFromMapFunc(enqueue)
	b = b.Named("metallb").
		Watches(&v1beta1.MetalLB{}, all).
		// A missing priority or runtime class may appear and make the spec valid.
		Watches(&schedulingv1.PriorityClass{}, all).
		Watches(&nodev1.RuntimeClass{}, all)
	// Nodes coming and going tell the platform, and whether the cluster has a
	// single node (the node-address mode's default).
	b = b.Watches(&corev1.Node{}, all, builder.WithPredicates(providerIDChanged))
	if r.opts.Platform == "" {
		if r.openshift {
			b = b.Watches(&configv1.Infrastructure{}, all)
		}
	}
	if r.clusterOperator != nil { // written again once the CVO recreates it
		b = b.Watches(&configv1.ClusterOperator{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == r.opts.ClusterOperator
		})))
	}
	// Every owned object, so that a deleted or edited one is restored at once.
	for _, gvk := range r.inventory.kinds {
		b = b.Watches(emptyObject(gvk), all)
	}
	return watchLookups(b, r.lookup, r.inventory)
}

// providerIDChanged passes Node events that can change the platform, and not
// the status updates every node makes every few seconds.
var providerIDChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.(*corev1.Node).Spec.ProviderID != e.ObjectNew.(*corev1.Node).Spec.ProviderID
	},
}

// Reconcile observes the cluster, plans what to do and does it. Reconciles run
// one at a time: the reconciler remembers the notices it gave.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.clock.Now()
	s, err := r.observe(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the cluster: %w", err)
	}
	p := plan(s, r.opts, r.clock.Now())
	err = r.act(ctx, s, p)
	ctrl.LoggerFrom(ctx).V(1).Info("reconciled", "platform", p.found.platform.Type, "allowed", p.found.allowed,
		"active", p.found.active, "foreign", len(p.found.foreign), "applied", len(p.Apply), "pruned", len(p.Prune),
		"duration", r.clock.Since(start), "error", err)
	if err != nil {
		return reconcile.Result{}, err // retried with backoff
	}
	return reconcile.Result{RequeueAfter: p.RequeueAfter}, nil
}

// inventory is what the module renders, whatever the settings: the kinds, in
// apply order, and those of them in MetalLB's namespace (with the webhooks,
// so that a webhook configuration left from a run with them is pruned), and
// the objects of the operator's environment, by kind and name only, for the
// lookup of objects another installation created.
type inventory struct {
	kinds      []schema.GroupVersionKind
	namespaced map[schema.GroupVersionKind]bool
	objects    []*unstructured.Unstructured
}

func inventoryOf(env Environment) (inventory, error) {
	all, err := renderDefaults(Environment{Namespace: env.Namespace, Images: env.Images, Webhooks: true})
	if err != nil {
		return inventory{}, err
	}
	inv := inventory{namespaced: map[schema.GroupVersionKind]bool{}}
	for _, o := range all {
		gvk := o.GroupVersionKind()
		if !slices.Contains(inv.kinds, gvk) {
			inv.kinds = append(inv.kinds, gvk)
		}
		if o.GetNamespace() != "" {
			inv.namespaced[gvk] = true
		}
	}
	objects, err := renderDefaults(env)
	for _, o := range objects {
		// The CRDs' schemas, as maps, would be megabytes held for nothing.
		id := emptyObject(o.GroupVersionKind())
		id.SetNamespace(o.GetNamespace())
		id.SetName(o.GetName())
		inv.objects = append(inv.objects, id)
	}
	return inv, err
}

func renderDefaults(env Environment) ([]*unstructured.Unstructured, error) {
	s, err := SettingsFor(env, nil)
	if err != nil {
		return nil, err
	}
	return Render(s, "")
}

func emptyObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	return o
}

// InstallAPI creates the MetalLB tuning object's CRD if it does not exist, so
// that the module can watch MetalLB objects from its start, wherever the
// operator was installed from. One that exists is left to the reconcile: it
// may be another MetalLB operator's, whose own fields applying this one's
// schema would prune from the user's object.
func InstallAPI(ctx context.Context, c client.Client) error {
	objs, err := Render(Settings{}, "") // the CRD depends on no setting
	if err != nil {
		return err
	}
	i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == crdKind.Kind && o.GetName() == "metallbs."+v1beta1.GroupVersion.Group
	})
	if i < 0 {
		return fmt.Errorf("bindata/metallb holds no CRD for %s", v1beta1.GroupVersion.WithKind("MetalLB"))
	}
	live := metadataObject(crdKind)
	err = c.Get(ctx, client.ObjectKeyFromObject(objs[i]), live)
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = (&apply.Applier{Client: c, FieldOwner: FieldOwner}).Write(ctx, objs[i:i+1], func(*unstructured.Unstructured) bool { return false })
	return err
}
