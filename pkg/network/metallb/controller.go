package metallb

import (
	"context"
	"encoding/json"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
)

// ObjectName is the name of the one MetalLB tuning object that counts.
const ObjectName = "metallb"

// FieldOwner is the field manager of everything the module applies.
const FieldOwner = "cluster-network-operator"

// Reconciler keeps MetalLB running as the tuning object asks. Every event maps
// to one request: each reconcile works out the whole desired state.
type Reconciler struct {
	Client    client.Client
	Namespace string
	Images    Images
}

// Add registers the MetalLB module with the manager.
func Add(mgr ctrl.Manager, namespace string, images Images) error {
	r := &Reconciler{Client: mgr.GetClient(), Namespace: namespace, Images: images}
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: ObjectName}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("metallb").
		Watches(&v1beta1.MetalLB{}, all).
		// A missing priority or runtime class may appear later and make the spec valid.
		Watches(&schedulingv1.PriorityClass{}, all).
		Watches(&nodev1.RuntimeClass{}, all).
		Complete(r)
}

// Reconcile applies MetalLB for the current tuning object.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var list v1beta1.MetalLBList
	if err := r.Client.List(ctx, &list); err != nil {
		return reconcile.Result{}, err
	}
	var obj *v1beta1.MetalLB
	for i := range list.Items {
		o := &list.Items[i]
		if o.Namespace == r.Namespace && o.Name == ObjectName {
			obj = o
			continue
		}
		if err := r.reportIgnored(ctx, o); err != nil {
			return reconcile.Result{}, err
		}
	}
	if obj == nil {
		return reconcile.Result{}, nil
	}

	settings, invalid := r.settings(ctx, obj)
	applyErr := r.apply(ctx, settings)
	if err := r.reportStatus(ctx, obj, invalid, applyErr); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, applyErr
}

// settings returns the settings to apply. When the spec is invalid, they are
// those of the last valid spec (status.appliedSpec, or the defaults if there
// was none), so that nothing running changes, with the reason it was refused.
func (r *Reconciler) settings(ctx context.Context, obj *v1beta1.MetalLB) (Settings, error) {
	s, err := SettingsFor(r.Namespace, r.Images, obj)
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
	s, lerr := SettingsFor(r.Namespace, r.Images, last)
	if lerr != nil {
		s, _ = SettingsFor(r.Namespace, r.Images, nil) // the defaults are valid
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
		err := r.Client.Get(ctx, client.ObjectKey{Name: ref.name}, ref.obj)
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.NotFound(ref.path, ref.name))
		case err != nil:
			return err
		}
	}
	return errs.ToAggregate()
}

func (r *Reconciler) apply(ctx context.Context, s Settings) error {
	objs, err := Render(s, NewMemberlistKey())
	if err != nil {
		return fmt.Errorf("rendering: %w", err)
	}
	applier := &apply.Applier{Client: r.Client, FieldOwner: FieldOwner}
	return applier.Apply(ctx, objs)
}

// appliedSpec records a valid spec for status.appliedSpec.
func appliedSpec(spec *v1beta1.MetalLBSpec) *runtime.RawExtension {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	return &runtime.RawExtension{Raw: raw}
}

// InstallAPI applies the MetalLB tuning object's CRD, so that the module can
// watch MetalLB objects from its start, wherever the operator was installed from.
func InstallAPI(ctx context.Context, c client.Client) error {
	objs, err := Render(Settings{}, "")
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == "metallbs."+v1beta1.GroupVersion.Group {
			return (&apply.Applier{Client: c, FieldOwner: FieldOwner}).Apply(ctx, []*unstructured.Unstructured{o})
		}
	}
	return fmt.Errorf("bindata/metallb holds no CRD for %s", v1beta1.GroupVersion.WithKind("MetalLB"))
}
