package metallb

import (
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

// watchConfigs watches the configuration kinds once their CRDs exist;
// watching a kind that is not served would fail the controller. Only their
// creation and deletion matter: whether MetalLB is asked for.
func (r *Reconciler) watchConfigs() error {
	for _, gvk := range configKinds {
		if r.watching[gvk] {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		src := source.Kind(r.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(enqueue), createdOrDeleted)
		if err := r.controller.Watch(src); err != nil {
			return fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
		r.watching[gvk] = true
	}
	return nil
}

// createdOrDeleted drops updates: they cannot change whether MetalLB is asked for.
var createdOrDeleted = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
