package objects

import (
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
