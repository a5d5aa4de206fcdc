package metallb

import (
	"reflect"
	"testing"

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
