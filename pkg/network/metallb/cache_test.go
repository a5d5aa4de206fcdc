package metallb

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// The shared kinds' transform keeps the module's own objects whole but for
// their managedFields, and of another's what a lookup reads: no spec or data,
// no annotation but adoption's and Helm's, managers by name only.
func TestOwnedWholeOthersLookedUp(t *testing.T) {
	managedFields := []any{map[string]any{"manager": "helm", "operation": "Update", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
	object := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "frr-startup", "namespace": "metallb-system", "uid": "u1", "resourceVersion": "7",
				"labels": labels, "managedFields": managedFields,
				"annotations": map[string]any{"meta.helm.sh/release-name": "metallb", "kubectl.kubernetes.io/last-applied-configuration": "{…}"}},
			"data": map[string]any{"daemons": "bgpd=yes"},
		}}
	}
	owned := map[string]any{}
	for k, v := range manifests.Ownership {
		owned[k] = v
	}
	for _, c := range []struct {
		name string
		in   *unstructured.Unstructured
		want map[string]any
	}{
		{"the module's", object(owned), map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "frr-startup", "namespace": "metallb-system", "uid": "u1", "resourceVersion": "7", "labels": owned,
				"annotations": map[string]any{"meta.helm.sh/release-name": "metallb", "kubectl.kubernetes.io/last-applied-configuration": "{…}"}},
			"data": map[string]any{"daemons": "bgpd=yes"},
		}},
		{"another's", object(map[string]any{"app": "metallb"}), map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "frr-startup", "namespace": "metallb-system", "uid": "u1", "resourceVersion": "7",
				"labels":        map[string]any{"app": "metallb"},
				"annotations":   map[string]any{"meta.helm.sh/release-name": "metallb"},
				"managedFields": []any{map[string]any{"manager": "helm", "operation": "Update"}}},
		}},
	} {
		got, err := ownedWholeOthersLookedUp(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if u := got.(*unstructured.Unstructured); !reflect.DeepEqual(u.Object, c.want) {
			t.Errorf("%s: kept\n%v\nwant\n%v", c.name, u.Object, c.want)
		}
	}
}

// TestProviderIDOnly: of a Node the cache keeps its name, version and
// provider ID, and a kept one again as it is.
func TestProviderIDOnly(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-0", UID: "u", ResourceVersion: "9",
		Labels: map[string]string{"a": "b"}}, Spec: corev1.NodeSpec{ProviderID: "kwok://kwok-0"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}}}
	kept, err := providerIDOnly(node)
	if err != nil {
		t.Fatal(err)
	}
	want := &nodeProvider{ObjectMeta: metav1.ObjectMeta{Name: "kwok-0", ResourceVersion: "9"}, ProviderID: "kwok://kwok-0"}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	again, err := providerIDOnly(kept)
	if err != nil || again != kept {
		t.Errorf("kept again: %v, %v; want it as it was", again, err)
	}
	if cp := kept.(*nodeProvider).DeepCopyObject(); cmp.Diff(kept, cp) != "" {
		t.Errorf("a deep copy differs: %s", cmp.Diff(kept, cp))
	}
}
