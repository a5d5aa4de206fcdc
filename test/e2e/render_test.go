package e2e

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// What `render` prints is what `kubectl apply --dry-run=server -f -` accepts:
// the printed YAML goes through a server-side dry-run apply, after its CRDs and
// namespace are applied for real.
func TestRenderOutputPassesServerSideDryRun(t *testing.T) {
	world.SideBySide(t, world.Beside)
	cmd := exec.Command(operatorBinary, "render",
		"--file", "../../pkg/network/metallb/manifests/testdata/scenarios/speaker-node-selector-tolerations.yaml",
		"--log-level", "debug", "--max-unavailable", "25%")
	cmd.Env = append(cmd.Environ(), "METALLB_SPEAKER_IMAGE=registry.example.com/speaker:"+release.MetalLB, "RELEASE_VERSION=4.22.0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs := decodeAll(t, out)
	assertRendered(t, objs)

	env := testenv.New(t, testenv.Options{})
	c := env.Client(t, nil)
	var prerequisites []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" {
			prerequisites = append(prerequisites, o)
		}
	}
	if _, err := (&apply.Applier{Client: c, FieldOwner: "kubectl"}).Apply(t.Context(), prerequisites); err != nil {
		t.Fatal(err)
	}
	if _, err := (&apply.Applier{Client: c, FieldOwner: "kubectl", DryRun: true}).Apply(t.Context(), objs); err != nil {
		t.Fatal(err)
	}
}

// assertRendered checks that the flags, the file and the environment all reached
// the output, and that no secret did.
func assertRendered(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	found := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		found[o.GetKind()+"/"+o.GetName()] = o
	}
	speaker := found["DaemonSet/speaker"]
	if speaker == nil {
		t.Fatal("no speaker DaemonSet in the output")
	}
	for path, want := range map[string]any{
		"spec.updateStrategy.rollingUpdate.maxUnavailable":                   "25%",
		"spec.template.spec.containers.0.args.1":                             "--log-level=debug",
		"spec.template.spec.containers.0.image":                              "registry.example.com/speaker:" + release.MetalLB,
		"metadata.annotations.release\\.openshift\\.io/version":              "4.22.0",
		"spec.template.spec.nodeSelector.example\\.com/load-balancer":        "true",
		"spec.template.spec.tolerations.2.key":                               "example.com/dedicated",
		"spec.template.spec.containers.0.securityContext.capabilities.add.0": "NET_RAW",
	} {
		if got := field(speaker.Object, path); got != want {
			t.Errorf("speaker %s = %v, want %v", path, got, want)
		}
	}
	secret := found["Secret/memberlist"]
	if secret == nil {
		t.Fatal("no memberlist Secret in the output")
	}
	if _, hasData := secret.Object["data"]; hasData {
		t.Error("render printed a memberlist key, not the placeholder")
	}
}

func TestRenderRefusesBadSettingsNamingTheField(t *testing.T) {
	code, stderr := runToExit(t, "render", "--max-unavailable", "150%", "--load-balancer-class", "not a class")
	if code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	assertOneLineError(t, stderr, `spec.loadBalancerClass: Invalid value: "not a class"`)
	assertOneLineError(t, stderr, `spec.speakerConfig.maxUnavailable: Invalid value: "150%"`)

	// As in the API server, a value of the wrong kind stops the rules' checks.
	code, stderr = runToExit(t, "render", "--max-unavailable", "150%", "--log-level", "loud")
	if code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	assertOneLineError(t, stderr, `spec.logLevel: Unsupported value: "loud"`)
	assertOneLineError(t, stderr, "some validation rules were not checked")
}

func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		o := &unstructured.Unstructured{}
		err := dec.Decode(&o.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// field reads a dotted path; "\." escapes a dot inside a key, a number indexes a list.
func field(obj any, path string) any {
	for _, part := range splitPath(path) {
		switch v := obj.(type) {
		case map[string]any:
			obj = v[part]
		case []any:
			i := 0
			for _, c := range part {
				i = i*10 + int(c-'0')
			}
			if i >= len(v) {
				return nil
			}
			obj = v[i]
		default:
			return nil
		}
	}
	return obj
}

func splitPath(path string) []string {
	parts := strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "\x00", ".")
	}
	return parts
}
