package metallb

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// A speaker DaemonSet that another installation (here, Helm) created is not
// touched; the status and an Event name it and its manager, and say how to
// let the operator take over. Asked to, it still does not while Helm's label
// says Helm manages the DaemonSet; once the label is off, it does: the
// DaemonSet is the operator's at once, and gets its template once the
// controller has rolled out, as in an upgrade.
func TestForeignSpeakerIsNotTouched(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(1)}, testOptions())
	ctx := t.Context()
	labels := map[string]string{"app": "metallb", "component": "speaker"}
	helm := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: "speaker", Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "speaker", Image: "quay.io/metallb/speaker:v0.14.0"}}},
			},
		},
	}
	if err := m.client.Create(ctx, helm, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}

	c := m.waitDegraded(t, clusterObject, isTrue)
	// kube-controller-manager writes the DaemonSet's status.
	for _, want := range []string{"DaemonSet metallb-system/speaker (written by helm, kube-controller-manager)", "Nothing was changed",
		"kubectl annotate namespace metallb-system " + manifests.AdoptAnnotation + "=true"} {
		if c.Reason != plan.ReasonForeignObjects || !strings.Contains(c.Message, want) {
			t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, want)
		}
	}
	m.waitEvent(t, manifests.DefaultNamespace, "speaker", plan.ReasonForeignObjects, "DaemonSet metallb-system/speaker (written by helm, kube-controller-manager)")
	m.assertAbsent(t, "Deployment/controller", "Secret/memberlist")
	m.assertUnwritten(t, helm)

	// The documented opt-in, refused while Helm manages the DaemonSet.
	m.annotateAdoption(t)
	c = m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool { return c.Reason == plan.ReasonTakeoverBlocked })
	if want := "kubectl label -n metallb-system daemonset/speaker app.kubernetes.io/managed-by-"; !strings.Contains(c.Message, want) {
		t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, want)
	}
	m.waitEvent(t, manifests.DefaultNamespace, "speaker", plan.ReasonHelmRelease, "Helm's release (unnamed) manages 1 of the objects")
	m.assertAbsent(t, "Deployment/controller", "Secret/memberlist")
	m.assertUnwritten(t, helm)

	patch := []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":null}}}`)
	if err := m.client.Patch(ctx, helm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the speaker DaemonSet adopted", 10*time.Second, func(ctx context.Context) (bool, error) {
		return m.get(t, objects.DaemonSet, manifests.DefaultNamespace, "speaker").GetLabels()[manifests.ManagedByLabel] == manifests.ManagedBy, nil
	})
	waitFor(t, "the adopted speakers rendered after the controller", time.Minute, func(ctx context.Context) (bool, error) {
		return strings.Contains(containerImage(m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)), ":"+release.MetalLB), nil
	})
	m.waitDegraded(t, clusterObject, isFalse)
}

// assertUnwritten checks that the operator wrote nothing of a DaemonSet,
// spec or metadata, since it was created; kube-controller-manager writes its
// status.
func (m *moduleEnv) assertUnwritten(t *testing.T, created *appsv1.DaemonSet) {
	t.Helper()
	live := &appsv1.DaemonSet{}
	if err := m.client.Get(t.Context(), client.ObjectKeyFromObject(created), live); err != nil {
		t.Fatal(err)
	}
	for _, f := range live.ManagedFields {
		if f.Manager == manifests.FieldOwner {
			t.Errorf("the foreign DaemonSet was written by the operator: %s of %s", f.Operation, f.Subresource)
		}
	}
	if live.Generation != created.Generation || !maps.Equal(live.Labels, created.Labels) || !maps.Equal(live.Annotations, created.Annotations) {
		t.Errorf("the foreign DaemonSet was written: generation %d, labels %v, annotations %v; was %d, %v, %v",
			live.Generation, live.Labels, live.Annotations, created.Generation, created.Labels, created.Annotations)
	}
}

// In MetalLB's namespace one informer of a kind serves both the module's own
// objects and the lookups of others' (sharedKinds): a ServiceAccount at a
// rendered name that another wrote is found, told and not touched, and once
// it goes the module creates its own. The module opened no watch of the
// shared kinds' metadata, and still looks DaemonSets up by theirs; and none
// of the priority and runtime classes, which the MetalLB object names none of.
func TestForeignObjectOfASharedKind(t *testing.T) {
	serviceAccount := corev1.SchemeGroupVersion.WithKind("ServiceAccount")
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	theirs := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ControllerName,
		Labels: map[string]string{"team": "network"}}}
	if err := m.client.Create(ctx, theirs, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	c := m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool { return c.Reason == plan.ReasonForeignObjects })
	if want := "ServiceAccount metallb-system/controller (written by someone)"; !strings.Contains(c.Message, want) {
		t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, want)
	}
	m.assertAbsent(t, "Deployment/controller")
	live := m.get(t, serviceAccount, manifests.DefaultNamespace, manifests.ControllerName)
	if !maps.Equal(live.GetLabels(), theirs.Labels) {
		t.Errorf("the foreign ServiceAccount's labels are %v, want %v: the module wrote it", live.GetLabels(), theirs.Labels)
	}

	if err := m.client.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the module's own ServiceAccount", 10*time.Second, func(ctx context.Context) (bool, error) {
		o := m.get(t, serviceAccount, manifests.DefaultNamespace, manifests.ControllerName)
		return o != nil && o.GetLabels()[manifests.ManagedByLabel] == manifests.ManagedBy, nil
	})
	m.waitDegraded(t, clusterObject, isFalse)

	watches := m.watchCounts()
	for _, resource := range []string{"serviceaccounts", "configmaps", "roles", "rolebindings", "services", "deployments", "networkpolicies"} {
		path := "namespaces/" + manifests.DefaultNamespace + "/" + resource
		if watches[path] == 0 || watches[path+" (metadata)"] != 0 {
			t.Errorf("%s: %d watches of whole objects, %d of metadata; want one informer of whole objects", path, watches[path], watches[path+" (metadata)"])
		}
	}
	if n := watches["priorityclasses"] + watches["runtimeclasses"]; n != 0 {
		t.Errorf("%d watches of priority or runtime classes, which the MetalLB object does not name", n)
	}
	if watches["daemonsets (metadata)"] == 0 {
		t.Errorf("no watch of every DaemonSet's metadata: the lookups of another MetalLB's speakers are gone; watches: %v", watches)
	}
}
