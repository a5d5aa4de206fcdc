package metallb

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

var clusterObject = client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}

// Only metallb-system/metallb counts: others are told so and change nothing.
func TestOtherMetalLBObjectsAreIgnored(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isFalse)
	before := m.workloads(t)

	for _, key := range []client.ObjectKey{{Namespace: manifests.DefaultNamespace, Name: "second"}, {Namespace: "default", Name: manifests.ObjectName}} {
		obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Spec: v1beta1.MetalLBSpec{LogLevel: v1beta1.LogLevelError}}
		if err := m.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		c := m.waitDegraded(t, key, isTrue)
		if c.Reason != plan.ReasonIgnored || !strings.Contains(c.Message, `only the MetalLB named "metallb" in namespace "metallb-system"`) {
			t.Errorf("%s: Degraded %s %q does not say why it is ignored", key, c.Reason, c.Message)
		}
	}
	if after := m.workloads(t); after != before {
		t.Errorf("an ignored object changed the workloads:\nbefore: %s\nafter:  %s", before, after)
	}
	m.waitDegraded(t, clusterObject, isFalse)
}

// create creates the object a YAML file holds, as `kubectl create -f` would.
func (m *moduleEnv) create(t testing.TB, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := m.client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s: %v", file, err)
	}
}

// setSpec replaces the cluster object's spec with one written in YAML, as
// `kubectl edit` would, and returns what the API server said.
func (m *moduleEnv) setSpec(t *testing.T, specYAML string) error {
	t.Helper()
	var spec map[string]any
	if err := yaml.Unmarshal([]byte("{"+specYAML+"}"), &spec); err != nil {
		t.Fatalf("test spec %q: %v", specYAML, err)
	}
	// The operator writes the status meanwhile: a conflict is not a refusal.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("MetalLB"))
		if err := m.client.Get(t.Context(), clusterObject, obj); err != nil {
			t.Fatal(err)
		}
		obj.Object["spec"] = spec
		return m.client.Update(t.Context(), obj)
	})
}

// workloads returns the controller Deployment and the speaker DaemonSet as
// the API server stores them, resourceVersion and all.
func (m *moduleEnv) workloads(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	for _, kind := range []string{"Deployment/controller", "DaemonSet/speaker"} {
		k, name, _ := strings.Cut(kind, "/")
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("apps/v1")
		obj.SetKind(k)
		if err := m.client.Get(t.Context(), client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	return out.String()
}

func isTrue(c metav1.Condition) bool  { return c.Status == metav1.ConditionTrue }
func isFalse(c metav1.Condition) bool { return c.Status == metav1.ConditionFalse }
