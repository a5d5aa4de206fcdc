package objects

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestContains(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1", "added-by-others": "y"}},
		"spec": map[string]any{
			"replicas":   int64(1),
			"containers": []any{map[string]any{"name": "c", "image": "i", "imagePullPolicy": "IfNotPresent"}},
		},
	}
	for _, tc := range []struct {
		name    string
		desired map[string]any
		want    bool
	}{
		{"a subset", map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "1"}}}, true},
		{"defaulted fields in list elements", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}, true},
		{"a changed value", map[string]any{"spec": map[string]any{"replicas": int64(2)}}, false},
		{"a missing key", map[string]any{"spec": map[string]any{"paused": true}}, false},
		{"a list of another length", map[string]any{"spec": map[string]any{"containers": []any{}}}, false},
		{"a changed list element", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "j"}}}}, false},
		{"a map where live has a scalar", map[string]any{"spec": map[string]any{"replicas": map[string]any{}}}, false},
	} {
		if got := Contains(live, tc.desired); got != tc.want {
			t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAppliedLeavesTheOriginal(t *testing.T) {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "annotations": map[string]any{"x": "1"}},
	}}
	h := Applied(o)
	if got := o.GetAnnotations(); len(got) != 1 || got["x"] != "1" {
		t.Errorf("the original's annotations changed: %v", got)
	}
	if h.GetAnnotations()[AppliedHashAnnotation] == "" || h.GetAnnotations()["x"] != "1" {
		t.Errorf("the copy's annotations are %v", h.GetAnnotations())
	}
	if Applied(o).GetAnnotations()[AppliedHashAnnotation] != h.GetAnnotations()[AppliedHashAnnotation] {
		t.Error("the same content hashes differently")
	}
}

// A CRD's schemas are compared by their digests: the same whether live is
// kept whole or digested, and any edit of a schema shows.
func TestNeedsWriteComparesCRDSchemasByDigest(t *testing.T) {
	crd := func(description string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "pools.example.com"},
			"spec": map[string]any{"group": "example.com", "versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "description": description}},
			}}},
		}}
	}
	written := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		live := Applied(o).DeepCopy()
		_ = unstructured.SetNestedField(live.Object, "None", "spec", "conversion", "strategy") // defaulted by the API server
		return live
	}
	desired := crd("a pool")
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
		want bool
	}{
		{"as written, whole", written(desired), false},
		{"as written, digested", WithSchemaDigests(written(desired)), false},
		{"a schema edited, whole", withAppliedHashOf(desired, written(crd("edited"))), true},
		{"a schema edited, digested", WithSchemaDigests(withAppliedHashOf(desired, written(crd("edited")))), true},
		{"written for another schema", WithSchemaDigests(written(crd("older"))), true},
	} {
		if got := NeedsWrite(desired, tc.live); got != tc.want {
			t.Errorf("%s: NeedsWrite = %v, want %v", tc.name, got, tc.want)
		}
	}
	before := desired.DeepCopy()
	if WithSchemaDigests(desired); !reflect.DeepEqual(before.Object, desired.Object) {
		t.Error("WithSchemaDigests changed its argument")
	}
}

// withAppliedHashOf gives live the applied hash that writing o leaves.
func withAppliedHashOf(o, live *unstructured.Unstructured) *unstructured.Unstructured {
	annotations := live.GetAnnotations()
	annotations[AppliedHashAnnotation] = Applied(o).GetAnnotations()[AppliedHashAnnotation]
	live.SetAnnotations(annotations)
	return live
}
