package apply

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// A custom resource that follows its new CRD in one Apply is written, even by
// a client whose REST mapper already looked for the kind and did not find it.
func TestCustomResourceRightAfterItsDefinition(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	c := env.Client(t, nil)
	a := &Applier{Client: c, FieldOwner: "test"}
	for i := range 5 {
		group := fmt.Sprintf("g%d.example.com", i)
		widget := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"},
			"spec":     map[string]any{"size": int64(i)},
		}}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(widget), widget.DeepCopy()); !meta.IsNoMatchError(err) {
			t.Fatalf("before its CRD: Widget of %s read with error %v, want no match", group, err)
		}
		if _, err := a.Apply(t.Context(), []*unstructured.Unstructured{widgetCRD(group), widget}); err != nil {
			t.Fatalf("Widget of %s right after its CRD: %v", group, err)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"})
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(widget), live); err != nil {
			t.Fatalf("Widget of %s not written: %v", group, err)
		}
	}
}

func widgetCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}
