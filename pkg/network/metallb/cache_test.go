package metallb

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

// Of frr-k8s's BGPSessionState the cache keeps who it is, since when, and
// the session the findings read; of an Event, the Service and words of a
// speaker's announceFailed, and only the pod creation's reason and time of
// another.
func TestCacheKeepsWhatFindingsRead(t *testing.T) {
	state := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "frrk8s.metallb.io/v1beta1", "kind": "BGPSessionState",
		"metadata": map[string]any{"name": "kwok-0-x", "namespace": "metallb-system", "uid": "u1", "resourceVersion": "7",
			"creationTimestamp": "2026-12-06T10:00:00Z", "labels": map[string]any{"frrk8s.metallb.io/node": "kwok-0"},
			"managedFields": []any{map[string]any{"manager": "frr-k8s"}}},
		"status": map[string]any{"node": "kwok-0", "peer": "192.0.2.1", "bgpStatus": "Active", "bfdStatus": "N/A", "vrf": ""},
	}}
	kept, err := keepWhatIsRead(state)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "frrk8s.metallb.io/v1beta1", "kind": "BGPSessionState",
		"metadata": map[string]any{"name": "kwok-0-x", "namespace": "metallb-system", "uid": "u1", "resourceVersion": "7",
			"creationTimestamp": "2026-12-06T10:00:00Z"},
		"status": map[string]any{"node": "kwok-0", "peer": "192.0.2.1", "bgpStatus": "Active"}}
	if got := kept.(*unstructured.Unstructured).Object; !reflect.DeepEqual(got, want) {
		t.Errorf("kept\n%v\nwant\n%v", got, want)
	}

	service := corev1.ObjectReference{Kind: "Service", Namespace: "demo", Name: "web", UID: "s1"}
	for _, c := range []struct {
		reason       string
		keepsWords   bool
		keepsService bool
	}{
		{"announceFailed", true, true},
		{reasonFailedCreate, true, false},
		{reasonSuccessfulCreate, false, false},
	} {
		got, err := eventWhatIsRead(&corev1.Event{Reason: c.reason, Message: "words", InvolvedObject: service, Source: corev1.EventSource{Host: "kwok-0"}})
		if err != nil {
			t.Fatal(err)
		}
		e := got.(*corev1.Event)
		if (e.Message != "") != c.keepsWords || (e.InvolvedObject.Name != "") != c.keepsService || e.InvolvedObject.UID != "s1" || e.Source.Host != "" {
			t.Errorf("%s: kept %+v", c.reason, e)
		}
	}
}
