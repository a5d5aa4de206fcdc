package metallb

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Once the controller has been available, the webhook configuration stays
// while it is down (here every node drained by a NoExecute taint): deleting
// it would turn validation off, and lose the CA bundle the controller wrote.
func TestWebhooksStayWhileTheControllerIsDown(t *testing.T) {
	t.Parallel()
	opts := testOptions()
	opts.Webhooks = true
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(2)}, opts)
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	var vwc *metav1.PartialObjectMetadata
	waitFor(t, "the webhook configuration, once the controller is available", time.Minute, func(ctx context.Context) (bool, error) {
		vwc = objects.Metadata(objects.ValidatingWebhookConfiguration)
		err := m.client.Get(ctx, client.ObjectKey{Name: manifests.WebhookConfiguration}, vwc)
		return err == nil, client.IgnoreNotFound(err)
	})

	m.taintNodes(t, corev1.Taint{Key: "example.com/drain", Value: "true", Effect: corev1.TaintEffectNoExecute})
	// As the module's cache sees it, so that settling is judged from there.
	waitFor(t, "the controller unavailable", time.Minute, func(ctx context.Context) (bool, error) {
		d := objects.Empty(objects.Deployment)
		err := m.r.client.Get(ctx, client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: manifests.ControllerName}, d)
		r := status.RolloutOf(d, manifests.ReleaseVersionAnnotation)
		return err == nil && (!r.Observed || r.Available == 0 || r.Updated == 0), err
	})
	settle(t, m)
	live := objects.Metadata(objects.ValidatingWebhookConfiguration)
	if err := m.client.Get(t.Context(), client.ObjectKey{Name: manifests.WebhookConfiguration}, live); err != nil {
		t.Fatalf("the webhook configuration is gone while the controller is down: %v", err)
	}
	if live.UID != vwc.UID {
		t.Errorf("the webhook configuration was replaced while the controller was down")
	}
}

// taintNodes adds a taint to every node.
func (m *moduleEnv) taintNodes(t *testing.T, taint corev1.Taint) {
	t.Helper()
	var nodes corev1.NodeList
	if err := m.client.List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		patch := client.MergeFrom(n.DeepCopy())
		n.Spec.Taints = append(n.Spec.Taints, taint)
		if err := m.client.Patch(t.Context(), &n, patch); err != nil {
			t.Fatal(err)
		}
	}
}

// A first spec the API server admits but the module finds invalid (a
// priority class that does not exist), or a status.appliedSpec someone
// cleared: what runs is left exactly as it is, and Degraded names the field.
func TestInvalidSpecWithNoAppliedSpecChangesNothing(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	m.create(t, "manifests/testdata/scenarios/speaker-node-selector-tolerations.yaml")
	m.waitDegraded(t, clusterObject, isFalse)
	m.waitSpeakerDaemonSet(t)
	before := m.workloadVersions(t)

	// The spec turns invalid (the last valid one keeps running), then the
	// status that records it is cleared.
	if err := m.setSpec(t, "speakerConfig: {priorityClassName: no-such-class}"); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isTrue)
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(t.Context(), clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	clear := client.RawPatch(types.MergePatchType, []byte(`{"status":{"appliedSpec":null}}`))
	if err := m.client.Status().Patch(t.Context(), obj, clear); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Degraded to say nothing running changes", 10*time.Second, func(context.Context) (bool, error) {
		c := m.degraded(t)
		return strings.Contains(c.Message, "spec.speakerConfig.priorityClassName") && strings.Contains(c.Message, "nothing running is changed"), nil
	})
	settle(t, m)
	if after := m.workloadVersions(t); after != before {
		t.Errorf("the workloads were written: resourceVersions %s, were %s", after, before)
	}
}

// A priority class the spec names and that does not exist yet: the object is
// Degraded, and once the class is created (an event of the watch the module
// started when the spec named a class) the speakers get it.
func TestNamedPriorityClassThatAppearsIsUsed(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName},
		Spec: v1beta1.MetalLBSpec{SpeakerConfig: &v1beta1.SpeakerConfig{Config: v1beta1.Config{PriorityClassName: "urgent"}}}}); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool {
		return c.Status == metav1.ConditionTrue && strings.Contains(c.Message, `spec.speakerConfig.priorityClassName: Not found: "urgent"`)
	})
	if err := m.client.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the speakers with the class", 10*time.Second, func(context.Context) (bool, error) {
		ds := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)
		if ds == nil {
			return false, nil
		}
		name, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "spec", "priorityClassName")
		return name == "urgent", nil
	})
	m.waitDegraded(t, clusterObject, isFalse)
}

// workloadVersions returns the resourceVersions of MetalLB's workloads, the
// controller's and the speakers'.
func (m *moduleEnv) workloadVersions(t *testing.T) string {
	t.Helper()
	var versions []string
	for _, w := range []struct {
		kind schema.GroupVersionKind
		name string
	}{{objects.Deployment, manifests.ControllerName}, {objects.DaemonSet, manifests.SpeakerName}} {
		versions = append(versions, m.get(t, w.kind, manifests.DefaultNamespace, w.name).GetResourceVersion())
	}
	return strings.Join(versions, ",")
}

// kubectl scale --replicas=0 on the controller is drift, undone at once.
func TestControllerScaledToZeroIsUndone(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitSpeakerDaemonSet(t)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ControllerName}}
	waitFor(t, "the controller Deployment", 10*time.Second, func(ctx context.Context) (bool, error) {
		return m.client.Get(ctx, client.ObjectKeyFromObject(dep), dep) == nil, nil
	})
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 0}}
	if err := m.client.SubResource("scale").Update(t.Context(), dep, client.WithSubResourceBody(scale), client.FieldOwner("kubectl-scale")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, "one replica again", 2*time.Second, func(ctx context.Context) (bool, error) {
		err := m.client.Get(ctx, client.ObjectKeyFromObject(dep), dep)
		return err == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 1, err
	})
	t.Logf("scale to zero undone in %s", time.Since(start).Round(time.Millisecond))
}

// An adopted installation's memberlist Secret, owned by that installation's
// controller Deployment, outlives the deactivation that deletes the
// Deployment: adoption removed the owner reference, and the key is kept.
func TestAdoptedMemberlistKeyOutlivesDeactivation(t *testing.T) {
	t.Parallel()
	adoptionStory(t, startModule(t, adoptionEnv, testOptions()))
}

// adoptionEnv is the control plane of adoptionStory.
var adoptionEnv = testenv.Options{ControllerManager: true}

func adoptionStory(t *testing.T, m *moduleEnv) {
	upstream := m.createUpstreamController(t)
	key := []byte("the-upstream-memberlist-key")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.MemberlistSecret, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: upstream.Name, UID: upstream.UID},
		}},
		Data: map[string][]byte{"secretkey": key},
	}
	if err := m.client.Create(t.Context(), secret, client.FieldOwner("controller")); err != nil {
		t.Fatal(err)
	}
	// A dependent of the same Deployment: once it is gone, the garbage
	// collector has dealt with the Deployment's deletion.
	canary := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: "canary", OwnerReferences: secret.OwnerReferences}}
	if err := m.client.Create(t.Context(), canary); err != nil {
		t.Fatal(err)
	}
	m.annotateAdoption(t)
	m.waitCRDs(t)
	pool := m.createPool(t, manifests.DefaultNamespace, "pool1")
	waitFor(t, "the memberlist Secret adopted", m.within(10*time.Second), func(ctx context.Context) (bool, error) {
		err := m.client.Get(ctx, client.ObjectKeyFromObject(secret), secret)
		return err == nil && secret.Labels[manifests.ManagedByLabel] == manifests.ManagedBy && len(secret.OwnerReferences) == 0, err
	})
	if err := m.client.Delete(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller Deployment deleted", m.within(10*time.Second), func(ctx context.Context) (bool, error) {
		return m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName) == nil, nil
	})
	m.waitGarbageCollected(t, canary)
	if err := m.client.Get(t.Context(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatalf("the adopted memberlist Secret is gone after deactivation: %v", err)
	}
	if string(secret.Data["secretkey"]) != string(key) {
		t.Error("the adopted memberlist key changed")
	}
}

// createUpstreamController creates MetalLB's controller Deployment as
// another installation would.
func (m *moduleEnv) createUpstreamController(t *testing.T) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": "metallb", "component": "controller"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ControllerName},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "quay.io/metallb/controller:v0.14.0"}}},
			},
		},
	}
	if err := m.client.Create(t.Context(), d, client.FieldOwner("metallb-operator")); err != nil {
		t.Fatal(err)
	}
	return d
}

// annotateAdoption lets the module take another installation's objects over.
func (m *moduleEnv) annotateAdoption(t *testing.T) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{manifests.AdoptAnnotation: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manifests.DefaultNamespace}}
	if err := m.client.Patch(t.Context(), ns, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// waitGarbageCollected waits until the garbage collector has deleted obj.
func (m *moduleEnv) waitGarbageCollected(t *testing.T, obj client.Object) {
	t.Helper()
	waitFor(t, "the garbage collector to delete "+obj.GetName(), time.Minute, func(ctx context.Context) (bool, error) {
		err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
