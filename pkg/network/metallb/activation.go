package metallb

import (
	"context"
	"fmt"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// configKinds are MetalLB's configuration kinds: one object of any of them in
// MetalLB's namespace is the user asking for MetalLB.
var configKinds = []schema.GroupVersionKind{
	metallbv1beta1.GroupVersion.WithKind("IPAddressPool"),
	metallbv1beta1.GroupVersion.WithKind("L2Advertisement"),
	metallbv1beta1.GroupVersion.WithKind("BGPAdvertisement"),
	metallbv1beta2.GroupVersion.WithKind("BGPPeer"),
	metallbv1beta1.GroupVersion.WithKind("BFDProfile"),
	metallbv1beta1.GroupVersion.WithKind("Community"),
}

// configs are the configuration objects of the cluster, by where they are.
type configs struct {
	// Served tells whether their kinds are served: MetalLB's CRDs exist.
	Served      bool
	inNamespace []*metav1.PartialObjectMetadata
	elsewhere   []*metav1.PartialObjectMetadata // MetalLB ignores them
}

// add sorts objects of a kind into MetalLB's namespace and elsewhere.
func (c *configs) add(gvk schema.GroupVersionKind, items []metav1.PartialObjectMetadata, namespace string) {
	for i := range items {
		o := &items[i]
		o.SetGroupVersionKind(gvk)
		if o.Namespace == namespace {
			c.inNamespace = append(c.inNamespace, o)
		} else {
			c.elsewhere = append(c.elsewhere, o)
		}
	}
}

// ofKind returns the objects of a kind in MetalLB's namespace.
func (c *configs) ofKind(kind string) []*metav1.PartialObjectMetadata {
	var out []*metav1.PartialObjectMetadata
	for _, o := range c.inNamespace {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// watchConfigs watches the configuration kinds, and MetalLB's reports on
// them, once their CRDs exist; watching a kind that is not served would fail
// the controller. Of the configuration, its creation and deletion matter
// (whether MetalLB is asked for), and changes of spec or labels (what the
// advertisements select); of the reports, their result.
func (r *Reconciler) watchConfigs() error {
	for _, gvk := range configKinds {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		if err := r.watchOnce(gvk, source.Kind(r.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(enqueue), specOrLabelsChanged)); err != nil {
			return err
		}
	}
	if _, err := r.client.RESTMapper().RESTMapping(configurationStateKind.GroupKind(), configurationStateKind.Version); err != nil {
		return ignoreNoMatch(err) // MetalLB's CRDs before v0.16 lack it: watched once the module's are applied
	}
	return r.watchOnce(configurationStateKind, source.Kind(r.cache, &metallbv1beta1.ConfigurationState{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o *metallbv1beta1.ConfigurationState) []reconcile.Request {
			return enqueue(ctx, o)
		}), resultChanged))
}

func (r *Reconciler) watchOnce(gvk schema.GroupVersionKind, src source.Source) error {
	if r.watching[gvk] {
		return nil
	}
	if err := r.controller.Watch(src); err != nil {
		return fmt.Errorf("watching %s: %w", gvk.Kind, err)
	}
	r.watching[gvk] = true
	return nil
}

var configurationStateKind = metallbv1beta1.GroupVersion.WithKind("ConfigurationState")

// specOrLabelsChanged drops the updates that change neither the spec (the
// generation) nor the labels.
var specOrLabelsChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})

// resultChanged drops the updates of a report that leave its result as it was.
var resultChanged = predicate.TypedFuncs[*metallbv1beta1.ConfigurationState]{
	UpdateFunc: func(e event.TypedUpdateEvent[*metallbv1beta1.ConfigurationState]) bool {
		return e.ObjectOld.Status.Result != e.ObjectNew.Status.Result || e.ObjectOld.Status.ErrorSummary != e.ObjectNew.Status.ErrorSummary
	},
}
