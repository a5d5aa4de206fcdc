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
	inNamespace []*metav1.PartialObjectMetadata
	elsewhere   []*metav1.PartialObjectMetadata // MetalLB ignores them
}

// configObjects lists the configuration objects of every kind, in every
// namespace. Only their metadata is cached: existence is all that matters.
func (r *Reconciler) configObjects(ctx context.Context, namespace string) (configs, error) {
	var found configs
	for _, gvk := range configKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.client.List(ctx, list); err != nil {
			return configs{}, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			o.SetGroupVersionKind(gvk)
			if o.Namespace == namespace {
				found.inNamespace = append(found.inNamespace, o)
			} else {
				found.elsewhere = append(found.elsewhere, o)
			}
		}
	}
	return found, nil
}

// startConfigWatches watches the configuration kinds once their CRDs exist;
// watching a kind that is not served would fail the controller.
func (r *Reconciler) startConfigWatches() error {
	for _, gvk := range configKinds {
		if r.watching[gvk] {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		src := source.Kind(r.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(enqueue), existence)
		if err := r.controller.Watch(src); err != nil {
			return fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
		r.watching[gvk] = true
	}
	return nil
}

// existence passes the events that can change whether MetalLB is asked for.
var existence = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
