package metallb

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// refusal is what the test's admission policy answers a MetalLB pod.
const refusal = "MetalLB's pods are refused in this namespace (the test's policy)"

// Admission refusing MetalLB's pods, as an SCC, Pod Security or a webhook
// would on a real cluster, with the real kube-controller-manager creating
// them: within 10 s of the refusals Degraded says PodsRefused, on the MetalLB
// object and the ClusterOperator, names the speaker DaemonSet and the
// controller Deployment and quotes the API server, with a Warning Event; once
// pods are admitted again it clears.
func TestRefusedPodsAreDegraded(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(2)})
	m.installClusterOperator(t)
	m.run(t, testOptions())
	ctx := t.Context()
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}
	if err := m.client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	m.waitStatus(t, testOptions().Images.ReleaseVersion, 60*time.Second)

	binding := m.refuseMetalLBPods(t)
	// A node's speaker and the controller are gone: their controllers create
	// them again, and are refused.
	start := time.Now()
	m.deletePods(t, manifests.SpeakerPods, 1)
	m.deletePods(t, map[string]string{"app": "metallb", "component": manifests.ControllerName}, 1)
	c := m.waitDegradedWithin(t, clusterObject, 10*time.Second, func(c metav1.Condition) bool {
		return c.Reason == plan.ReasonPodsRefused && strings.Contains(c.Message, "the DaemonSet speaker cannot create its pods") &&
			strings.Contains(c.Message, "the Deployment controller cannot create its pods")
	})
	t.Logf("PodsRefused %s after the pods' deletion: %s", time.Since(start).Round(time.Millisecond), c.Message)
	if n := strings.Count(c.Message, refusal); n != 2 {
		t.Errorf("Degraded quotes the admission's answer %d times, want 2 (speaker, controller): %q", n, c.Message)
	}
	m.waitEvent(t, manifests.DefaultNamespace, manifests.ObjectName, "DegradedTrue", "PodsRefused: The API server refuses MetalLB's pods: the ")
	m.waitClusterOperatorDegraded(t, plan.ReasonPodsRefused)

	// Admitted again: the controllers retry on their own, and Degraded clears.
	if err := m.client.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	m.waitDegradedWithin(t, clusterObject, 2*time.Minute, func(c metav1.Condition) bool { return c.Status == metav1.ConditionFalse })
	t.Logf("Degraded cleared %s after the policy's binding was deleted", time.Since(start).Round(time.Millisecond))
	m.waitClusterOperatorDegraded(t, status.ReasonAsExpected)
	m.waitSpeakers(t, 2)
}

// refuseMetalLBPods has a ValidatingAdmissionPolicy refuse every new speaker
// and controller pod in MetalLB's namespace, and waits until the API server
// enforces it; it returns the policy's binding.
func (m *moduleEnv) refuseMetalLBPods(t *testing.T) client.Object {
	t.Helper()
	ctx := t.Context()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "refuse-metallb-pods"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}},
			Validations: []admissionv1.Validation{{Message: refusal,
				Expression: "!(object.metadata.name.startsWith('speaker-') || object.metadata.name.startsWith('controller-'))"}},
		}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "refuse-metallb-pods"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: manifests.DefaultNamespace}}}}}
	// The operator's scheme, the tests', has no admission policies.
	var created []*unstructured.Unstructured
	for kind, o := range map[string]any{"ValidatingAdmissionPolicy": policy, "ValidatingAdmissionPolicyBinding": binding} {
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: fields}
		u.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind(kind))
		if err := m.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		created = append(created, u)
	}
	// The API server loads the policy within a second or so: a dry run tells.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: "speaker-probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c"}}}}
	waitFor(t, "the policy enforced", 30*time.Second, func(ctx context.Context) (bool, error) {
		switch err := m.client.Create(ctx, probe.DeepCopy(), client.DryRunAll); {
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			return true, nil // refused: the policy holds
		default:
			return false, err // admitted (nil): not yet
		}
	})
	return created[slices.IndexFunc(created, func(u *unstructured.Unstructured) bool { return u.GetKind() == "ValidatingAdmissionPolicyBinding" })]
}

// deletePods deletes n of the pods with the labels in MetalLB's namespace.
func (m *moduleEnv) deletePods(t *testing.T, labels map[string]string, n int) {
	t.Helper()
	var pods corev1.PodList
	if err := m.client.List(t.Context(), &pods, client.InNamespace(manifests.DefaultNamespace), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) < n {
		t.Fatalf("%d pods with labels %v, want at least %d", len(pods.Items), labels, n)
	}
	for _, p := range pods.Items[:n] {
		if err := m.client.Delete(t.Context(), &p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitClusterOperatorDegraded waits until the ClusterOperator's Degraded
// condition has the reason.
func (m *moduleEnv) waitClusterOperatorDegraded(t *testing.T, reason string) {
	t.Helper()
	var last configv1.ClusterOperatorStatusCondition
	waitFor(t, "the ClusterOperator Degraded with reason "+reason, 10*time.Second, func(ctx context.Context) (bool, error) {
		co := &configv1.ClusterOperator{}
		if err := m.client.Get(ctx, client.ObjectKey{Name: Name}, co); err != nil {
			return false, err
		}
		for _, c := range co.Status.Conditions {
			if c.Type == configv1.OperatorDegraded {
				last = c
			}
		}
		return last.Reason == reason, nil
	})
}

// speakerSCCFile is the speakers' SCC, which the operator's manifests bring.
var speakerSCCFile = filepath.Join("..", "..", "..", "manifests", "0000_70_metallb_03_scc.yaml")

// On OpenShift, under its own SCC admission with kube-controller-manager
// creating the pods as their service accounts: every pod, with the native BGP
// backend and with frr-k8s, is admitted under the SCC it names, which the
// module's Roles alone let its account use (the controller restricted-v2, the
// speakers their own SCC from the manifests, frr-k8s privileged and its status
// cleaner hostnetwork-v2), and MetalLB reports its version. With the speakers'
// SCC gone (as an administrator might delete it), a speaker is refused and
// Degraded says so within 10 s, naming the DaemonSet and quoting the
// admission; with it back, Degraded clears.
func TestEveryPodAdmittedUnderItsSCC(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{SCCAdmission: true, ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(2)})
	m.create(t, speakerSCCFile)
	m.run(t, testOptions())
	ctx := t.Context()
	m.waitCRDs(t)
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}
	if err := m.client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitStatus(t, testOptions().Images.ReleaseVersion, 2*time.Minute)
	m.assertAdmittedUnder(t, map[string]string{manifests.ControllerName: manifests.ControllerSCC, manifests.SpeakerName: manifests.SpeakerSCC})

	if err := m.setSpec(t, "bgpBackend: frr-k8s"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "speakers using frr-k8s on every node", 2*time.Minute, func(context.Context) (bool, error) {
		ds := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)
		updated, _, _ := unstructured.NestedInt64(ds.Object, "status", "updatedNumberScheduled")
		ready, _, _ := unstructured.NestedInt64(ds.Object, "status", "numberReady")
		return containerEnv(t, ds)[manifests.BGPTypeEnv] == "frr-k8s" && updated == 2 && ready == 2, nil
	})
	m.waitStatus(t, testOptions().Images.ReleaseVersion, time.Minute)
	m.assertAdmittedUnder(t, map[string]string{manifests.ControllerName: manifests.ControllerSCC, manifests.SpeakerName: manifests.SpeakerSCC,
		manifests.FRRK8sName: manifests.FRRK8sSCC, manifests.FRRK8sStatusCleaner: manifests.FRRK8sStatusCleanerSCC})

	scc := objects.Empty(objects.SecurityContextConstraints)
	scc.SetName(manifests.SpeakerSCC)
	if err := m.client.Delete(ctx, scc); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m.deletePods(t, manifests.SpeakerPods, 1)
	c := m.waitDegradedWithin(t, clusterObject, 10*time.Second, func(c metav1.Condition) bool {
		return c.Reason == plan.ReasonPodsRefused && strings.Contains(c.Message, "the DaemonSet speaker cannot create its pods")
	})
	t.Logf("PodsRefused %s after the speaker's deletion: %s", time.Since(start).Round(time.Millisecond), c.Message)
	if !strings.Contains(c.Message, manifests.SpeakerSCC) {
		t.Errorf("Degraded does not quote the SCC admission's refusal, which names the SCC %s: %q", manifests.SpeakerSCC, c.Message)
	}
	m.create(t, speakerSCCFile)
	start = time.Now()
	m.waitDegradedWithin(t, clusterObject, time.Minute, func(c metav1.Condition) bool { return c.Status == metav1.ConditionFalse })
	t.Logf("Degraded cleared %s after the SCC was created again", time.Since(start).Round(time.Millisecond))
	m.waitSpeakers(t, 2)
}

// assertAdmittedUnder checks that the pods in MetalLB's namespace were
// admitted under the SCCs of their workloads (testenv.CheckAdmittedUnder).
func (m *moduleEnv) assertAdmittedUnder(t *testing.T, want map[string]string) {
	t.Helper()
	var pods corev1.PodList
	if err := m.client.List(t.Context(), &pods, client.InNamespace(manifests.DefaultNamespace)); err != nil {
		t.Fatal(err)
	}
	problems, seen := testenv.CheckAdmittedUnder(pods.Items, want)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("pods admitted, by workload: %v; SCCs %v", seen, want)
}
