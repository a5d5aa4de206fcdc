package metallb

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

var clusterObject = client.ObjectKey{Namespace: DefaultNamespace, Name: ObjectName}

// Who refuses a bad input: the API server, from the CRD's schema and CEL rules,
// or the operator, with an InvalidConfiguration condition.
const (
	byAPIServer = "API server"
	byOperator  = "operator"
)

// badInputs are specs that must not change what runs. Each names the field its
// refusal must name.
var badInputs = []struct {
	name, spec, field, layer string
}{
	{"unknown log level", `logLevel: loud`, "spec.logLevel", byAPIServer},
	{"log level of the wrong type", `logLevel: 3`, "spec.logLevel", byAPIServer},
	{"unknown BGP backend", `bgpBackend: bird`, "spec.bgpBackend", byAPIServer},
	{"FRR-K8s backend, not yet supported", `bgpBackend: frr-k8s`, "spec.bgpBackend", byOperator},
	{"FRR backend, not yet supported", `bgpBackend: frr`, "spec.bgpBackend", byOperator},
	{"load balancer class with spaces", `loadBalancerClass: "not a class"`, "spec.loadBalancerClass", byAPIServer},
	{"maxUnavailable 0", `speakerConfig: {maxUnavailable: 0}`, "spec.speakerConfig.maxUnavailable", byAPIServer},
	{"maxUnavailable negative", `speakerConfig: {maxUnavailable: -2}`, "spec.speakerConfig.maxUnavailable", byAPIServer},
	{"maxUnavailable 0%", `speakerConfig: {maxUnavailable: "0%"}`, "spec.speakerConfig.maxUnavailable", byAPIServer},
	{"maxUnavailable 150%", `speakerConfig: {maxUnavailable: "150%"}`, "spec.speakerConfig.maxUnavailable", byAPIServer},
	{"maxUnavailable in words", `speakerConfig: {maxUnavailable: "ten"}`, "spec.speakerConfig.maxUnavailable", byAPIServer},
	{"tolerationSeconds with NoSchedule", `speakerTolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]`, "spec.speakerTolerations", byAPIServer},
	{"tolerationSeconds without effect", `controllerTolerations: [{key: a, operator: Exists, tolerationSeconds: 5}]`, "spec.controllerTolerations", byAPIServer},
	{"unknown toleration operator", `speakerTolerations: [{key: a, operator: Maybe}]`, "spec.speakerTolerations", byAPIServer},
	{"unknown toleration effect", `controllerTolerations: [{key: a, operator: Exists, effect: Sometimes}]`, "spec.controllerTolerations", byAPIServer},
	{"toleration value with Exists", `speakerTolerations: [{key: a, operator: Exists, value: b}]`, "spec.speakerTolerations", byAPIServer},
	{"33 tolerations", `speakerTolerations: [` + strings.Repeat(`{operator: Exists},`, 32) + `{operator: Exists}]`, "spec.speakerTolerations", byAPIServer},
	{"priority class name with capitals", `controllerConfig: {priorityClassName: "Urgent!"}`, "spec.controllerConfig.priorityClassName", byAPIServer},
	{"runtime class name with capitals", `speakerConfig: {runtimeClassName: "gVisor"}`, "spec.speakerConfig.runtimeClassName", byAPIServer},
	{"quantity that is not one", `controllerConfig: {resources: {requests: {cpu: lots}}}`, "spec.controllerConfig.resources.requests.cpu", byAPIServer},
	{"node selector value not a string", `nodeSelector: {a: [1]}`, "spec.nodeSelector.a", byAPIServer},
	{"node selector key with a space", `nodeSelector: {"bad key": "x"}`, "spec.nodeSelector", byOperator},
	{"node selector value with a space", `nodeSelector: {"example.com/lb": "not a value"}`, "spec.nodeSelector", byOperator},
	{"controller node selector key with two slashes", `controllerNodeSelector: {"a/b/c": "x"}`, "spec.controllerNodeSelector", byOperator},
	{"toleration key with a space", `speakerTolerations: [{key: "bad key", operator: Exists}]`, "spec.speakerTolerations[0].key", byOperator},
	{"toleration without key and with Equal", `speakerTolerations: [{operator: Equal, value: x}]`, "spec.speakerTolerations[0].operator", byOperator},
	{"toleration value not a label value", `controllerTolerations: [{key: a, operator: Equal, value: "not a value!"}]`, "spec.controllerTolerations[0].value", byOperator},
	{"node affinity weight 0", `speakerConfig: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}}`,
		"spec.speakerConfig.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", byOperator},
	{"pod anti-affinity weight 101", `controllerConfig: {affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, podAffinityTerm: {topologyKey: kubernetes.io/hostname}}]}}}`,
		"spec.controllerConfig.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", byOperator},
	{"node selector operator Near", `speakerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}}`,
		"spec.speakerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator", byOperator},
	{"In without values", `speakerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}}`,
		"spec.speakerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values", byOperator},
	{"Gt with a word", `controllerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: [many]}]}]}}}}`,
		"spec.controllerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", byOperator},
	{"requests above limits", `controllerConfig: {resources: {requests: {memory: 1Gi}, limits: {memory: 100Mi}}}`, "spec.controllerConfig.resources.requests[memory]", byOperator},
	{"negative quantity", `speakerConfig: {resources: {requests: {cpu: "-1"}}}`, "spec.speakerConfig.resources.requests[cpu]", byOperator},
	{"priority class that does not exist", `speakerConfig: {priorityClassName: does-not-exist}`, "spec.speakerConfig.priorityClassName", byOperator},
	{"runtime class that does not exist", `controllerConfig: {runtimeClassName: does-not-exist}`, "spec.controllerConfig.runtimeClassName", byOperator},
	{"annotation key with a space", `speakerConfig: {annotations: {"bad key": x}}`, "spec.speakerConfig.annotations", byOperator},
}

// Every bad input is refused, by the API server or by the operator, with a
// message naming the field; in both cases the workloads in the cluster stay
// exactly as they were, byte for byte.
func TestBadInputLeavesWorkloadsUnchanged(t *testing.T) {
	m := startModule(t, testenv.Options{}, testOptions())

	// The starting point is an object written for the upstream metallb-operator,
	// created as it is: the API server and the operator accept it, and it places
	// and configures MetalLB as it asks.
	m.create(t, filepath.Join("testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitDegraded(t, clusterObject, isFalse)
	before := m.workloads(t)
	for _, want := range []string{`"--log-level=debug"`, `"node-role.kubernetes.io/worker":""`, `"key":"example.com/dedicated"`,
		`"node-role.kubernetes.io/control-plane":""`, `"example.com/team":"network"`} {
		if !strings.Contains(before, want) {
			t.Errorf("the upstream operator's object was not applied as it asks: no %s in\n%s", want, before)
		}
	}

	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			err := m.setSpec(t, tc.spec)
			switch {
			case err != nil && tc.layer == byAPIServer:
				if !strings.Contains(err.Error(), tc.field) {
					t.Errorf("the API server refused it without naming %s: %v", tc.field, err)
				}
			case err != nil:
				t.Fatalf("the API server refused what the operator should: %v", err)
			case tc.layer == byAPIServer:
				t.Fatalf("the API server accepted it; the CRD should refuse it naming %s", tc.field)
			default:
				c := m.waitDegraded(t, clusterObject, isTrue)
				if c.Reason != ReasonInvalidConfiguration || !strings.Contains(c.Message, tc.field) {
					t.Errorf("Degraded %s %q does not name %s", c.Reason, c.Message, tc.field)
				}
			}
			if after := m.workloads(t); after != before {
				t.Errorf("the workloads changed:\nbefore: %s\nafter:  %s", before, after)
			}
		})
	}

	// A valid spec again is applied: the checks above could have seen a change.
	if err := m.setSpec(t, `logLevel: warn`); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isFalse)
	if after := m.workloads(t); after == before || !strings.Contains(after, "--log-level=warn") {
		t.Errorf("a valid spec after bad ones was not applied:\n%s", after)
	}
}

// Only metallb-system/metallb counts: others are told so and change nothing.
func TestOtherMetalLBObjectsAreIgnored(t *testing.T) {
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isFalse)
	before := m.workloads(t)

	for _, key := range []client.ObjectKey{{Namespace: DefaultNamespace, Name: "second"}, {Namespace: "default", Name: ObjectName}} {
		obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Spec: v1beta1.MetalLBSpec{LogLevel: v1beta1.LogLevelError}}
		if err := m.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		c := m.waitDegraded(t, key, isTrue)
		if c.Reason != ReasonIgnoredObject || !strings.Contains(c.Message, `only the MetalLB named "metallb" in namespace "metallb-system"`) {
			t.Errorf("%s: Degraded %s %q does not say why it is ignored", key, c.Reason, c.Message)
		}
	}
	if after := m.workloads(t); after != before {
		t.Errorf("an ignored object changed the workloads:\nbefore: %s\nafter:  %s", before, after)
	}
	m.waitDegraded(t, clusterObject, isFalse)
}

// create creates the object a YAML file holds, as `kubectl create -f` would.
func (m *moduleEnv) create(t *testing.T, file string) {
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
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
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
		if err := m.client.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: name}, obj); err != nil {
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
