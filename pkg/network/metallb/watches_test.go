package metallb

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatusOnly: a DaemonSet's update is reconciled later only when nothing
// but its status changed.
func TestStatusOnly(t *testing.T) {
	daemonSet := func(change func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet",
			"metadata": map[string]any{"name": "speaker", "namespace": "metallb-system", "generation": int64(3),
				"labels": map[string]any{"app": "metallb"}, "annotations": map[string]any{"a": "1"}},
			"status": map[string]any{"numberReady": int64(10)}}}
		change(u)
		return u
	}
	for _, c := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"its status", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"numberReady": int64(11)} }, true},
		{"its spec (a new generation)", func(u *unstructured.Unstructured) { u.SetGeneration(4) }, false},
		{"its labels", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "other"}) }, false},
		{"its annotations", func(u *unstructured.Unstructured) { u.SetAnnotations(nil) }, false},
		{"its deletion", func(u *unstructured.Unstructured) { now := metav1.Now(); u.SetDeletionTimestamp(&now) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := statusOnly(daemonSet(func(*unstructured.Unstructured) {}), daemonSet(c.change)); got != c.want {
				t.Errorf("statusOnly %v, want %v", got, c.want)
			}
		})
	}
}
