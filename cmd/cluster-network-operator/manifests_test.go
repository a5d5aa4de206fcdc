package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
)

const manifestsDir = "../../manifests"

// The install manifests agree with the code (`make verify` runs this): every
// file parses and is one the CVO includes, the kustomization lists every
// manifest but the OpenShift-only ones, the Deployment's arguments are the operator's flags and its
// environment names what the operator reads, and each image is in
// image-references; and its RBAC cannot be widened (assertRBACCannotBeWidened).
func TestInstallManifestsAgreeWithTheCode(t *testing.T) {
	objs := readManifests(t)
	assertKustomization(t)
	t.Run("RBACCannotBeWidened", func(t *testing.T) { assertRBACCannotBeWidened(t, objs) })
	assertOpenShiftPayload(t, objs)
	var deployment appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			fromUnstructured(t, o, &deployment)
		}
	}
	if len(deployment.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("no operator Deployment with one container in the manifests")
	}
	c := deployment.Spec.Template.Spec.Containers[0]
	flags := pflag.NewFlagSet("start", pflag.ContinueOnError)
	opts := operator.DefaultOptions(modules()...)
	opts.AddFlags(flags)
	if len(c.Args) == 0 || c.Args[0] != "start" {
		t.Fatalf("the Deployment runs %v, not the start command", c.Args)
	}
	if err := flags.Parse(c.Args[1:]); err != nil {
		t.Errorf("the Deployment's arguments are not the operator's flags: %v", err)
	}
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name)
		if e.Name == operator.PodNameEnv && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name") {
			t.Errorf("the Deployment's %s is not the pod's name (fieldRef metadata.name): %+v", e.Name, e)
		}
	}
	sort.Strings(env)
	want := []string{manifests.ControllerImageEnv, manifests.SpeakerImageEnv, manifests.FRRK8sImageEnv, manifests.FRRImageEnv, manifests.ReleaseVersionEnv, operator.PodNameEnv}
	sort.Strings(want)
	if !slices.Equal(env, want) {
		t.Errorf("the Deployment's environment is %v; the operator reads %v", env, want)
	}
	refs := readFile(t, "image-references")
	images := []string{c.Image}
	for _, e := range c.Env {
		if strings.HasSuffix(e.Name, "_IMAGE") {
			images = append(images, e.Value)
		}
	}
	for _, image := range images {
		if !strings.Contains(refs, "name: "+image+"\n") {
			t.Errorf("image %s is not in image-references: the release payload would not replace it", image)
		}
	}
}

// readManifests parses every YAML file of the manifests.
func readManifests(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestsDir, "0000_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestsDir, err)
	}
	var objs []*unstructured.Unstructured
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			o := &unstructured.Unstructured{}
			if err := decoder.Decode(&o.Object); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s: %v", filepath.Base(file), err)
				}
				break
			}
			if o.GetKind() == "" || o.GetName() == "" {
				t.Errorf("%s: an object without kind or name", filepath.Base(file))
			}
			objs = append(objs, o)
		}
		f.Close()
	}
	return objs
}

// assertKustomization checks that kustomization.yaml lists every manifest
// plain Kubernetes can apply: all but the ClusterOperator.
// assertOpenShiftPayload checks what OpenShift's payload needs of the
// manifests: the CVO's annotation on each, the namespaces' empty node
// selector, and the SCC the speakers require.
func assertOpenShiftPayload(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		// Without it the CVO leaves the manifest out of the payload.
		if o.GetAnnotations()["include.release.openshift.io/self-managed-high-availability"] != "true" {
			t.Errorf("%s %s lacks the annotation include.release.openshift.io/self-managed-high-availability", o.GetKind(), o.GetName())
		}
		// A cluster-wide default node selector must keep no pod off a node.
		if selector, ok := o.GetAnnotations()["openshift.io/node-selector"]; o.GetKind() == "Namespace" && (!ok || selector != "") {
			t.Errorf("namespace %s lacks the annotation openshift.io/node-selector: \"\"", o.GetName())
		}
	}
	// The SCC the rendered speakers require and their Role lets them use.
	if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "SecurityContextConstraints" && o.GetName() == manifests.SpeakerSCC
	}) {
		t.Errorf("no SecurityContextConstraints %s in the manifests: the speakers require it on OpenShift", manifests.SpeakerSCC)
	}
}

func assertKustomization(t *testing.T) {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := sigsyaml.Unmarshal([]byte(readFile(t, "kustomization.yaml")), &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(manifestsDir, "0000_*.yaml"))
	for _, f := range files {
		name := filepath.Base(f)
		in := slices.Contains(k.Resources, name)
		openShiftOnly := strings.Contains(name, "clusteroperator") || strings.Contains(name, "servicemonitor") || strings.HasSuffix(name, "_scc.yaml")
		if in == openShiftOnly {
			t.Errorf("kustomization.yaml: %s listed=%v; every manifest but the SCC, the ClusterOperator and the ServiceMonitor belongs there", name, in)
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifestsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fromUnstructured(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}
