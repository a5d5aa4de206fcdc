package metallb

import (
	"context"
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// ObjectName is the name of the one MetalLB tuning object that counts.
const ObjectName = "metallb"

// FieldOwner is the field manager of everything the module applies.
const FieldOwner = "cluster-network-operator"

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
}

// Reconciler keeps MetalLB as the platform, the user's configuration and the
// tuning object ask. Every event maps to one request: each reconcile works out
// the whole desired state from what it reads.
type Reconciler struct {
	client    client.Client // reads owned objects from a label-filtered cache
	apiReader client.Reader // reads what that cache does not hold
	cache     cache.Cache
	events    recorder.EventRecorder
	opts      Options
	openshift bool // the Infrastructure API exists
	kinds     []schema.GroupVersionKind

	clusterOperator *status.ClusterOperator // nil where that API does not exist
	controller      controller.Controller

	mu             sync.Mutex                       // held by Reconcile: what follows is its own
	watching       map[schema.GroupVersionKind]bool // configuration kinds watched
	told           map[string]string                // object → the last Event given on it
	lastConditions *status.Conditions               // for Events on transitions
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
	kinds, _, err := ownedKinds(opts.Environment)
	if err != nil {
		return nil, err
	}
	mapper := mgr.GetRESTMapper()
	_, err = mapper.RESTMapping(configv1.GroupVersion.WithKind("Infrastructure").GroupKind())
	r := &Reconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		cache:     mgr.GetCache(),
		events:    mgr.GetEventRecorder(FieldOwner),
		opts:      opts,
		openshift: err == nil,
		kinds:     kinds,
		watching:  map[schema.GroupVersionKind]bool{},
		told:      map[string]string{},
	}
	if _, err := mapper.RESTMapping(configv1.GroupVersion.WithKind("ClusterOperator").GroupKind()); err == nil && opts.ClusterOperator != "" {
		r.clusterOperator = &status.ClusterOperator{Client: mgr.GetClient(), Name: opts.ClusterOperator, Clock: clock.RealClock{}}
	}
	all := handler.EnqueueRequestsFromMapFunc(enqueue)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("metallb").
		Watches(&v1beta1.MetalLB{}, all).
		// A missing priority or runtime class may appear and make the spec valid.
		Watches(&schedulingv1.PriorityClass{}, all).
		Watches(&nodev1.RuntimeClass{}, all)
	if opts.Platform == "" {
		b = b.Watches(&corev1.Node{}, all, builder.WithPredicates(providerIDChanged))
		if r.openshift {
			b = b.Watches(&configv1.Infrastructure{}, all)
		}
	}
	if r.clusterOperator != nil { // recreated if deleted
		b = b.Watches(&configv1.ClusterOperator{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == opts.ClusterOperator
		})))
	}
	// Every owned object, so that a deleted or edited one is restored at once.
	for _, gvk := range kinds {
		b = b.Watches(ownedObject(gvk), all)
	}
	r.controller, err = b.Build(r)
	return r, err
}

// providerIDChanged passes Node events that can change the platform, and not
// the status updates every node makes every few seconds.
var providerIDChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.(*corev1.Node).Spec.ProviderID != e.ObjectNew.(*corev1.Node).Spec.ProviderID
	},
}

// Reconcile brings MetalLB to the desired state. Reconciles run one at a time:
// each works out the whole state, and the reconciler remembers what it told.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &state{}
	var err error
	if st.tuning, err = r.tuningObject(ctx); err != nil {
		return reconcile.Result{}, err
	}
	start := time.Now()
	st.applyErr = r.reconcile(ctx, st)
	log := ctrl.LoggerFrom(ctx)
	log.V(1).Info("reconciled", "platform", st.platform.Type, "allowed", st.allowed, "active", st.active(),
		"foreign", len(st.foreign), "duration", time.Since(start), "error", st.applyErr)
	if err := r.report(ctx, st); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: st.requeueAfter}, st.applyErr
}

// reconcile does the work and records what it found in st; it returns errors
// that a retry may cure.
func (r *Reconciler) reconcile(ctx context.Context, st *state) error {
	var err error
	if st.platform, err = r.platform(ctx); err != nil {
		return err
	}
	st.allowed = slices.Contains(r.opts.AllowedPlatforms, st.platform.Type)
	if st.tracking, err = r.loadTracking(ctx, r.opts.Namespace); err != nil {
		return err
	}
	if !st.allowed {
		// Nothing is applied, and nothing removed: what runs keeps its addresses.
		return r.tellPlatform(ctx, st)
	}

	settings, invalid := r.settings(ctx, st.tuning)
	st.invalid, st.specValid = invalid, invalid == nil && st.tuning != nil
	st.maxUnavailable = settings.MaxUnavailable
	desired, err := Render(settings, NewMemberlistKey())
	if err != nil {
		return fmt.Errorf("rendering: %w", err)
	}
	applier := &apply.Applier{Client: r.client, APIReader: r.apiReader, FieldOwner: FieldOwner}

	// The namespace is shared with whoever created it; owning it (its labels)
	// lets the module hear of changes to it, the adoption annotation among them.
	namespace := onlyKinds(desired, "Namespace")
	if _, err := applier.Apply(ctx, namespace); err != nil {
		return err
	}
	// Another installation's objects are never overwritten, unless adopted.
	adopt, err := r.adoptionAllowed(ctx, settings.Namespace)
	if err != nil {
		return err
	}
	if !adopt {
		if st.foreign, err = applier.Foreign(ctx, withoutKind(desired, "Namespace"), ownership); err != nil {
			return err
		}
		if len(st.foreign) > 0 {
			r.tellForeign(st.foreign)
			return nil
		}
	}

	// The CRDs are there whenever the platform allows MetalLB, so that users can
	// create its objects; only then can they be watched.
	foundation := onlyKinds(desired, "Namespace", "CustomResourceDefinition")
	if _, err := applier.Apply(ctx, foundation); err != nil {
		return err
	}
	if err := r.startConfigWatches(); err != nil {
		return err
	}
	if st.configs, err = r.configObjects(ctx, settings.Namespace); err != nil {
		return err
	}
	r.tellIgnored(st.configs)

	want := foundation
	if st.active() {
		want, err = r.gateWebhooks(ctx, desired, settings)
		if err != nil {
			return err
		}
	}
	writes, err := r.holdSpeakers(ctx, want, settings)
	if err != nil {
		return err
	}
	changes, err := applier.Apply(ctx, writes)
	r.tellChanges(changes)
	if err != nil {
		return err
	}
	// What is held back is still wanted: prune by want, not by what was written.
	if _, err := applier.Prune(ctx, r.kinds, ownership, want, neverDeleted); err != nil {
		return err
	}
	return r.track(ctx, st, settings)
}

// track works out how far the rollouts are, keeping the tracking in the
// cluster, and whether one is hung.
func (r *Reconciler) track(ctx context.Context, st *state, s Settings) error {
	prev, err := r.loadTracking(ctx, s.Namespace)
	if err != nil {
		return err
	}
	if st.rollouts, err = r.rollouts(ctx, s.Namespace); err != nil {
		return err
	}
	now := time.Now()
	st.tracking = status.Track(prev, s.Images.ReleaseVersion, st.rollouts, now)
	if stalled := st.tracking.Stalled(now); st.tracking.InFlight() && stalled >= r.opts.HungAfter {
		st.hung = true
		if st.hungNodes, err = r.notReadySpeakerNodes(ctx, s.Namespace); err != nil {
			return err
		}
	} else if st.tracking.InFlight() {
		st.requeueAfter = r.opts.HungAfter - stalled // to notice a rollout that stops moving
	}
	return r.saveTracking(ctx, s.Namespace, prev, st.tracking)
}

// tuningObject returns metallb-system/metallb, or nil, telling every other
// MetalLB object that it is ignored.
func (r *Reconciler) tuningObject(ctx context.Context) (*v1beta1.MetalLB, error) {
	var list v1beta1.MetalLBList
	if err := r.client.List(ctx, &list); err != nil {
		return nil, err
	}
	var obj *v1beta1.MetalLB
	for i := range list.Items {
		o := &list.Items[i]
		if o.Namespace == r.opts.Namespace && o.Name == ObjectName {
			obj = o
			continue
		}
		if err := r.reportIgnored(ctx, o); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (r *Reconciler) platform(ctx context.Context) (Platform, error) {
	if r.opts.Platform != "" {
		return Platform{Type: r.opts.Platform, Source: "--platform"}, nil
	}
	return detectPlatform(ctx, r.client, r.openshift)
}

// settings returns the settings to apply. When the spec is invalid, they are
// those of the last valid spec (status.appliedSpec, or the defaults if there
// was none), so that nothing running changes, with the reason it was refused.
func (r *Reconciler) settings(ctx context.Context, obj *v1beta1.MetalLB) (Settings, error) {
	s, err := SettingsFor(r.opts.Environment, obj)
	if err == nil {
		err = r.checkReferences(ctx, s)
	}
	if err == nil {
		return s, nil
	}
	var last *v1beta1.MetalLB
	if applied := obj.Status.AppliedSpec; applied != nil {
		l := &v1beta1.MetalLB{}
		if json.Unmarshal(applied.Raw, &l.Spec) == nil {
			last = l
		}
	}
	s, lerr := SettingsFor(r.opts.Environment, last)
	if lerr != nil {
		s, _ = SettingsFor(r.opts.Environment, nil) // the defaults are valid
	}
	return s, err
}

// checkReferences checks that the classes the pods would name exist: without
// them the API server refuses the pods, not the workloads, and a rollout hangs.
func (r *Reconciler) checkReferences(ctx context.Context, s Settings) error {
	var errs field.ErrorList
	for _, ref := range []struct {
		path *field.Path
		name string
		obj  client.Object
	}{
		{specPath.Child("controllerConfig", "priorityClassName"), s.Controller.PriorityClassName, &schedulingv1.PriorityClass{}},
		{speakerPath.Child("priorityClassName"), s.Speaker.PriorityClassName, &schedulingv1.PriorityClass{}},
		{specPath.Child("controllerConfig", "runtimeClassName"), s.Controller.RuntimeClassName, &nodev1.RuntimeClass{}},
		{speakerPath.Child("runtimeClassName"), s.Speaker.RuntimeClassName, &nodev1.RuntimeClass{}},
	} {
		if ref.name == "" {
			continue
		}
		err := r.client.Get(ctx, client.ObjectKey{Name: ref.name}, ref.obj)
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.NotFound(ref.path, ref.name))
		case err != nil:
			return err
		}
	}
	return errs.ToAggregate()
}

// adoptionAllowed tells whether the namespace carries AdoptAnnotation.
func (r *Reconciler) adoptionAllowed(ctx context.Context, namespace string) (bool, error) {
	ns, err := r.live(ctx, namespaceKind, "", namespace)
	if err != nil || ns == nil {
		return false, err
	}
	return ns.GetAnnotations()[AdoptAnnotation] == "true", nil
}

// gateWebhooks leaves the webhook configuration out of desired until the
// controller, which serves the webhooks, is available: with failure policy
// Fail, the configuration would otherwise refuse every MetalLB object.
func (r *Reconciler) gateWebhooks(ctx context.Context, desired []*unstructured.Unstructured, s Settings) ([]*unstructured.Unstructured, error) {
	if !s.Webhooks {
		return desired, nil
	}
	ready, err := r.controllerAvailable(ctx, s.Namespace)
	if err != nil || ready {
		return desired, err
	}
	return withoutKind(desired, "ValidatingWebhookConfiguration"), nil
}

func (r *Reconciler) controllerAvailable(ctx context.Context, namespace string) (bool, error) {
	d, err := r.live(ctx, deploymentKind, namespace, "controller")
	if err != nil || d == nil {
		return false, err
	}
	c := status.RolloutOf(d, ReleaseVersionAnnotation)
	return c.Observed && c.Available > 0 && c.Updated > 0, nil
}

// neverDeleted protects what losing would lose user data or split the
// speakers' memberlist cluster: the CRDs (and with them every MetalLB object),
// the namespace, the memberlist key.
func neverDeleted(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "CustomResourceDefinition", "Namespace":
		return true
	case "Secret":
		return o.GetName() == memberlistSecret
	}
	return false
}

const memberlistSecret = "memberlist"

// ownedKinds are the kinds the module renders, in apply order, and which of
// them live in MetalLB's namespace.
func ownedKinds(env Environment) (kinds []schema.GroupVersionKind, namespaced map[schema.GroupVersionKind]bool, err error) {
	s, err := SettingsFor(Environment{Namespace: env.Namespace, Images: env.Images, Webhooks: true}, nil)
	if err != nil {
		return nil, nil, err
	}
	objs, err := Render(s, "")
	if err != nil {
		return nil, nil, err
	}
	namespaced = map[schema.GroupVersionKind]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if !slices.Contains(kinds, gvk) {
			kinds = append(kinds, gvk)
		}
		if o.GetNamespace() != "" {
			namespaced[gvk] = true
		}
	}
	return kinds, namespaced, nil
}

func ownedObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	return o
}

func onlyKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

func withoutKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != kind {
			out = append(out, o)
		}
	}
	return out
}

// InstallAPI applies the MetalLB tuning object's CRD, so that the module can
// watch MetalLB objects from its start, wherever the operator was installed from.
func InstallAPI(ctx context.Context, c client.Client) error {
	objs, err := Render(Settings{}, "") // the CRD depends on no setting
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == "metallbs."+v1beta1.GroupVersion.Group {
			_, err := (&apply.Applier{Client: c, FieldOwner: FieldOwner}).Apply(ctx, []*unstructured.Unstructured{o})
			return err
		}
	}
	return fmt.Errorf("bindata/metallb holds no CRD for %s", v1beta1.GroupVersion.WithKind("MetalLB"))
}
