package docs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// The runbooks' placeholders, as this test fills them: a pod of each kind the
// alerts name, made from the rendered pod templates.
var (
	placeholders = strings.NewReplacer("<node>", "node-a", "<peer>", "192.0.2.3", "<bgppeer>", "router", "<pool>", "lan",
		"<namespace>", "default", "<service>", "web")
	fixturePods = map[string]string{ // workload → pod
		"speaker": "speaker-x7k2p", "frr-k8s-daemon": "frr-k8s-daemon-q4w9z",
		"controller": "controller-5d8f7-abcde", "frr-k8s-statuscleaner": "frr-k8s-statuscleaner-6b9c4-xyz12",
	}
)

// Every kubectl command of docs/runbooks runs against a real control plane
// holding what the operator renders (the frr-k8s backend, the monitoring
// objects, MetalLB's RBAC) and what a cluster running MetalLB holds
// (testdata/runbook-cluster.yaml, pods of MetalLB's workloads): each must
// succeed, but for logs and exec, which reach as far as the kubelet these
// pods do not have. An unknown resource, flag, field, container or label
// fails, as does a can-i the rendered RBAC answers no.
func TestRunbookCommands(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	c := env.Client(t, nil)
	kubectl, err := testenv.Binary("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	rendered := applyRendering(t, c)
	applyFile(t, c, "testdata/runbook-cluster.yaml")
	commands := runbookCommands(t)
	if len(commands) < 13 {
		t.Fatalf("%d kubectl commands in docs/runbooks: the test no longer finds them", len(commands))
	}
	for _, cmd := range commands {
		ensurePods(t, c, rendered)
		out, err := runKubectl(t, kubectl, env.Kubeconfig, cmd.line)
		if err != nil && !reachesTheKubelet(cmd.line, out) {
			t.Errorf("%s: %s\n%v: %s", cmd.at, cmd.line, err, out)
		}
	}
}

// runbookCommand is a kubectl command of a runbook, its placeholders filled.
type runbookCommand struct{ at, line string }

func runbookCommands(t *testing.T) []runbookCommand {
	t.Helper()
	files, err := filepath.Glob("../../docs/runbooks/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no runbooks: %v", err)
	}
	var out []runbookCommand
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inShell, n := false, 0
		for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
			n++
			line := strings.TrimSpace(s.Text())
			switch {
			case strings.HasPrefix(line, "```"):
				inShell = line == "```sh"
			case inShell && strings.HasPrefix(line, "kubectl "):
				out = append(out, runbookCommand{at: filepath.Base(f) + ":" + strconv.Itoa(n), line: fillPod(f, line)})
			case inShell && line != "" && !strings.HasPrefix(line, "#"):
				t.Errorf("%s:%d: a shell block holds more than kubectl commands: %s", f, n, line)
			}
		}
	}
	return out
}

// fillPod fills the placeholders; <pod> is the pod the alert names: the
// operator's in its namespace, frr-k8s's for its alerts and FRR's containers,
// else a speaker.
func fillPod(file, line string) string {
	pod := fixturePods["speaker"]
	switch {
	case strings.Contains(line, "-n cluster-network-operator"):
		pod = "cluster-network-operator-7c9d5-k2x8w"
	case strings.HasPrefix(filepath.Base(file), "FRRK8s") || strings.Contains(line, "-c frr") || strings.Contains(line, "-c reloader"):
		pod = fixturePods["frr-k8s-daemon"]
	}
	return placeholders.Replace(strings.ReplaceAll(line, "<pod>", pod))
}

// reachesTheKubelet tells a logs or exec command that the API server took and
// could not pass on: the pod runs on no node.
func reachesTheKubelet(line, out string) bool {
	verb := strings.Fields(line)[1]
	return (verb == "logs" || verb == "exec") && strings.Contains(out, "does not have a host assigned")
}

func runKubectl(t *testing.T, kubectl, kubeconfig, line string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "KUBE_EDITOR=true",
		"PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// applyRendering applies prometheus-operator's CRDs and OpenShift's
// ClusterOperator API, then what the operator renders with the frr-k8s
// backend and monitoring on, MetalLB's webhooks off (nothing serves them
// here); it returns the rendering.
func applyRendering(t *testing.T, c client.Client) []*unstructured.Unstructured {
	t.Helper()
	images, err := manifests.ImagesFromEnv(func(string) string { return "" }, "1.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	env := manifests.Environment{Namespace: manifests.DefaultNamespace, Images: images, Monitoring: true}
	s, err := manifests.SettingsFor(env, &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s}})
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := manifests.Render(s, "")
	if err != nil {
		t.Fatal(err)
	}
	objs := append(testenv.MonitoringCRDs(t), readObjects(t, clusterOperatorsCRD)...)
	objs = append(objs, rendered...)
	if _, err := (&apply.Applier{Client: c, FieldOwner: "runbook-test"}).Apply(t.Context(), objs); err != nil {
		t.Fatal(err)
	}
	return rendered
}

// clusterOperatorsCRD is OpenShift's ClusterOperator API, as the status
// package's tests install it.
const clusterOperatorsCRD = "../../pkg/status/publish/testdata/clusteroperators-crd.yaml"

// applyFile creates the objects of a YAML file, and a ClusterOperator.
func applyFile(t *testing.T, c client.Client, path string) {
	t.Helper()
	co := &unstructured.Unstructured{}
	co.SetAPIVersion("config.openshift.io/v1")
	co.SetKind("ClusterOperator")
	co.SetName("metallb")
	for _, o := range append(readObjects(t, path), co) {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// ensurePods creates, where missing (a runbook deletes one), a running pod of
// each of MetalLB's workloads, from its rendered template, owned by it, on no
// node.
func ensurePods(t *testing.T, c client.Client, rendered []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range rendered {
		name, ok := fixturePods[o.GetName()]
		if !ok || (o.GetKind() != "Deployment" && o.GetKind() != "DaemonSet") {
			continue
		}
		pod := &corev1.Pod{}
		err := c.Get(t.Context(), client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, pod)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		createRunningPod(t, c, o, name)
	}
}

func createRunningPod(t *testing.T, c client.Client, workload *unstructured.Unstructured, name string) {
	t.Helper()
	live := workload.DeepCopy()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(workload), live); err != nil {
		t.Fatal(err)
	}
	var tpl corev1.PodTemplateSpec
	raw, _, _ := unstructured.NestedMap(live.Object, "spec", "template")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: live.GetNamespace(), Name: name, Labels: tpl.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(live, live.GroupVersionKind())}}, Spec: tpl.Spec}
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := c.Status().Update(t.Context(), pod); err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
}
