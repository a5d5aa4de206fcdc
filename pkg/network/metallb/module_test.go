package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// The whole life of MetalLB on a bare-metal cluster of three kwok nodes: the
// CRDs come first, a pool brings MetalLB, whatever is deleted or edited comes
// back, and when the last pool goes MetalLB goes, keeping the user's data and
// the memberlist key for the next time.
func TestActivationRepairAndDeactivation(t *testing.T) {
	t.Parallel()
	activationStory(t, startModule(t, activationEnv, testOptions()))
}

// activationEnv is the control plane of activationStory.
var activationEnv = testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)}

func activationStory(t *testing.T, m *moduleEnv) {
	// No configuration: the CRDs and the namespace, nothing else.
	m.waitCRDs(t)
	m.assertAbsent(t, "Deployment/controller", "DaemonSet/speaker", "Secret/memberlist")

	// A pool in another namespace changes nothing, and is told why.
	m.createPool(t, "default", "elsewhere")
	m.waitEvent(t, "default", "elsewhere", plan.ReasonIgnored, "IPAddressPool default/elsewhere is outside metallb-system and is ignored")
	m.assertAbsent(t, "Deployment/controller", "DaemonSet/speaker")

	// A pool in MetalLB's namespace brings MetalLB: a speaker on every node.
	pool := m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitSpeakers(t, 3)
	key := m.memberlistKey(t)
	m.waitEvent(t, manifests.DefaultNamespace, manifests.MemberlistSecret, "MemberlistKeyGenerated", "Generated the speakers' memberlist key")

	m.assertDriftRepaired(t)
	newKey := m.assertMemberlistRestored(t, key)

	// The last pool goes: so do the workloads and the Services; the CRDs, the
	// namespace and the key stay.
	if err := m.client.Delete(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "MetalLB deactivated", m.within(10*time.Second), func(ctx context.Context) (bool, error) {
		var services corev1.ServiceList
		err := m.client.List(ctx, &services, client.InNamespace(manifests.DefaultNamespace))
		return err == nil && len(services.Items) == 0 &&
			m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName) == nil &&
			m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName) == nil, err
	})
	if n := m.crdCount(t.Context()); n != 9 {
		t.Errorf("%d of MetalLB's 9 CRDs left after deactivation", n)
	}
	if m.get(t, manifests.IPAddressPoolKind, "default", "elsewhere") == nil {
		t.Error("the pool in the default namespace was deleted")
	}
	if got := m.memberlistKey(t); got != newKey {
		t.Error("the memberlist key changed on deactivation")
	}

	// Back again: the same key.
	m.createPool(t, manifests.DefaultNamespace, "pool2")
	m.waitSpeakers(t, 3)
	if got := m.memberlistKey(t); got != newKey {
		t.Error("reactivation did not reuse the memberlist key")
	}
}

// assertDriftRepaired deletes the speaker DaemonSet and edits the controller's
// image: both come back as rendered.
func (m *moduleEnv) assertDriftRepaired(t *testing.T) {
	t.Helper()
	ds := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)
	if err := m.client.Delete(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, "the speaker DaemonSet restored", m.within(5*time.Second), func(context.Context) (bool, error) {
		o := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)
		return o != nil && o.GetUID() != ds.GetUID(), nil
	})
	t.Logf("deleted speaker DaemonSet restored in %s", time.Since(start).Round(time.Millisecond))

	edit := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"controller","image":"registry.example.com/not-metallb:1"}]}}}}`)
	dep := m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName)
	if err := m.client.Patch(t.Context(), dep, client.RawPatch(types.StrategicMergePatchType, edit), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	waitFor(t, "the controller image restored", m.within(5*time.Second), func(context.Context) (bool, error) {
		o := m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName)
		return strings.Contains(containerImage(o), "quay.io/metallb/controller:"), nil
	})
	t.Logf("edited controller image restored in %s", time.Since(start).Round(time.Millisecond))
}

// assertMemberlistRestored deletes the memberlist Secret: it comes back with a
// new key only because the old one was gone, and an Event says what to do
// about it. It returns the new key.
func (m *moduleEnv) assertMemberlistRestored(t *testing.T, key string) string {
	t.Helper()
	if err := m.client.Delete(t.Context(), m.get(t, objects.Secret, manifests.DefaultNamespace, manifests.MemberlistSecret)); err != nil {
		t.Fatal(err)
	}
	m.waitEvent(t, manifests.DefaultNamespace, manifests.MemberlistSecret, "MemberlistKeyRegenerated", "kubectl rollout restart daemonset/speaker -n metallb-system")
	newKey := m.memberlistKey(t)
	if newKey == key {
		t.Error("the restored memberlist Secret has the deleted one's key")
	}
	return newKey
}

// containerEnv is the environment of a workload's first container, the
// variables set by value.
func containerEnv(t *testing.T, o *unstructured.Unstructured) map[string]string {
	t.Helper()
	var ds appsv1.DaemonSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &ds); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range ds.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

// containerImage is the image of a workload's first container.
func containerImage(o *unstructured.Unstructured) string {
	if o == nil {
		return ""
	}
	containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	image, _ := containers[0].(map[string]any)["image"].(string)
	return image
}

// waitSpeakers waits until the speaker DaemonSet runs a ready pod on n nodes
// and the controller Deployment exists.
func (m *moduleEnv) waitSpeakers(t *testing.T, n int64) {
	t.Helper()
	waitFor(t, "speakers on every node", m.within(30*time.Second), func(context.Context) (bool, error) {
		ds := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, "speaker")
		if ds == nil || m.get(t, objects.Deployment, manifests.DefaultNamespace, "controller") == nil {
			return false, nil
		}
		ready, _, _ := unstructured.NestedInt64(ds.Object, "status", "numberReady")
		return ready == n, nil
	})
}

func (m *moduleEnv) memberlistKey(t testing.TB) string {
	t.Helper()
	var key string
	waitFor(t, "the memberlist Secret", 10*time.Second, func(context.Context) (bool, error) {
		s := m.get(t, objects.Secret, manifests.DefaultNamespace, "memberlist")
		if s == nil {
			return false, nil
		}
		key, _, _ = unstructured.NestedString(s.Object, "data", "secretkey")
		return key != "", nil
	})
	return key
}

// crdCount counts MetalLB's own CRDs that are Established.
func (m *moduleEnv) crdCount(ctx context.Context) int {
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := m.client.List(ctx, &crds); err != nil {
		return -1
	}
	n := 0
	for _, c := range crds.Items {
		if c.Spec.Group == "metallb.io" && c.Name != manifests.MetalLBCRD && apihelpers.IsCRDConditionTrue(&c, apiextensionsv1.Established) {
			n++
		}
	}
	return n
}

var gvkOfKind = map[string]schema.GroupVersionKind{"Deployment": objects.Deployment, "DaemonSet": objects.DaemonSet, "Secret": objects.Secret}

// assertAbsent checks, once the module has nothing left to do, that none of
// the objects ("Kind/name" in MetalLB's namespace) exists.
func (m *moduleEnv) assertAbsent(t *testing.T, objects ...string) {
	t.Helper()
	settle(t, m)
	for _, o := range objects {
		kind, name, _ := strings.Cut(o, "/")
		if m.get(t, gvkOfKind[kind], manifests.DefaultNamespace, name) != nil {
			t.Fatalf("%s exists, but MetalLB was not asked for", o)
		}
	}
}

// waitEvent waits for an Event on the named object with the reason and a note
// containing want.
func (m *moduleEnv) waitEvent(t *testing.T, namespace, name, reason, want string) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, m.within(10*time.Second), true, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := m.client.List(ctx, &events, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range events.Items {
			if e.InvolvedObject.Name != name {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && strings.Contains(e.Message, want) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Event %s saying %q on %s/%s; its Events: %q", reason, want, namespace, name, seen)
	}
}
