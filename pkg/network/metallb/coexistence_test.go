package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// A speaker DaemonSet that another installation (here, Helm) created is not
// touched; the status and an Event name it and its manager, and say how to
// let the operator take over, which then works.
func TestForeignSpeakerIsNotTouched(t *testing.T) {
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	labels := map[string]string{"app": "metallb", "component": "speaker"}
	helm := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: "speaker", Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
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
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}); err != nil {
		t.Fatal(err)
	}

	c := m.waitDegraded(t, clusterObject, isTrue)
	for _, want := range []string{"DaemonSet metallb-system/speaker (written by helm)", "Nothing was changed",
		"kubectl annotate namespace metallb-system " + AdoptAnnotation + "=true"} {
		if c.Reason != ReasonForeignObjects || !strings.Contains(c.Message, want) {
			t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, want)
		}
	}
	m.waitEvent(t, DefaultNamespace, "speaker", ReasonForeignObjects, "DaemonSet metallb-system/speaker (written by helm)")
	m.assertAbsent(t, "Deployment/controller", "Secret/memberlist")
	live := &appsv1.DaemonSet{}
	if err := m.client.Get(ctx, client.ObjectKeyFromObject(helm), live); err != nil {
		t.Fatal(err)
	}
	if live.ResourceVersion != helm.ResourceVersion {
		t.Errorf("the foreign DaemonSet was written: resourceVersion %s, was %s", live.ResourceVersion, helm.ResourceVersion)
	}

	// The documented opt-in: the operator takes the DaemonSet over.
	ns := &corev1.Namespace{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: DefaultNamespace}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Annotations = map[string]string{AdoptAnnotation: "true"}
	if err := m.client.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the speaker DaemonSet adopted", 10*time.Second, func(ctx context.Context) (bool, error) {
		ds := m.get(t, daemonSetGVK, DefaultNamespace, "speaker")
		return ds.GetLabels()[ManagedByLabel] == ManagedBy && strings.Contains(containerImage(ds), ":v0.16.1"), nil
	})
	m.waitDegraded(t, clusterObject, isFalse)
}
