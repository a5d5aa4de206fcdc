package manifests

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Inventory is what the module renders, whatever the settings, worked out once
// at start from the defaults of the operator's environment.
type Inventory struct {
	// Kinds are the kinds, in apply order, with ValidatingWebhookConfiguration
	// whether the webhooks are on or not, so that a webhook configuration left
	// from a run with them is pruned.
	Kinds []schema.GroupVersionKind
	// Namespaced are those of them in MetalLB's namespace.
	Namespaced map[schema.GroupVersionKind]bool
	// Objects are the rendered objects, by kind and name only: what the lookup
	// of objects another installation created looks for.
	Objects []*unstructured.Unstructured
}

// InventoryOf renders the defaults of the environment.
func InventoryOf(env Environment) (Inventory, error) {
	s, err := SettingsFor(env, nil)
	if err != nil {
		return Inventory{}, err
	}
	all, err := Render(s, "")
	if err != nil {
		return Inventory{}, err
	}
	inv := Inventory{Namespaced: map[schema.GroupVersionKind]bool{}}
	for _, o := range all {
		gvk := o.GroupVersionKind()
		if !slices.Contains(inv.Kinds, gvk) {
			inv.Kinds = append(inv.Kinds, gvk)
		}
		if o.GetNamespace() != "" {
			inv.Namespaced[gvk] = true
		}
		// The CRDs' schemas, as maps, would be megabytes held for nothing.
		id := objects.Empty(gvk)
		id.SetNamespace(o.GetNamespace())
		id.SetName(o.GetName())
		inv.Objects = append(inv.Objects, id)
	}
	// The webhook configurations come last in apply order.
	if !slices.Contains(inv.Kinds, objects.ValidatingWebhookConfiguration) {
		inv.Kinds = append(inv.Kinds, objects.ValidatingWebhookConfiguration)
	}
	return inv, nil
}
