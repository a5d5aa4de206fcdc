package manifests

import (
	"bytes"
	"flag"
	configv1 "github.com/openshift/api/config/v1"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// scenario is one set of inputs the golden and dry-run tests render.
type scenario struct {
	name       string
	env        map[string]string       // the operator's environment; unset variables keep defaults
	noWebhooks bool                    // the operator runs with --metallb-webhooks=false
	monitoring bool                    // prometheus-operator's CRDs exist
	openshift  bool                    // OpenShift: its Infrastructure API exists, pods are admitted by SCCs
	clusterTLS configv1.TLSProfileType // the cluster's TLS security profile, if any
	// platformFRR is OpenShift's network operator running frr-k8s (its
	// Network API served, FRR enabled); without it, as on MicroShift, none.
	platformFRR bool
}

// scenarios are rendered from testdata/scenarios/<name>.yaml (a MetalLB object),
// when it exists, and the environment.
var scenarios = []scenario{
	{name: "defaults"},
	{name: "speaker-node-selector-tolerations"},
	{name: "controller-on-control-plane"},
	{name: "log-level-debug"},
	{name: "load-balancer-class"},
	{name: "max-unavailable-10-percent"},
	{name: "upstream-operator-object"},
	{name: "webhooks-disabled", noWebhooks: true},
	{name: "frr-k8s"},
	{name: "frr-k8s-speaker-settings"},
	{name: "failure-detection-fast"},
	{name: "network-policies-disabled"},
	{name: "monitoring", monitoring: true},
	{name: "monitoring-frr-k8s", monitoring: true},
	{name: "monitoring-openshift", monitoring: true, openshift: true},
	{name: "tls-modern-frr-k8s"},
	{name: "tls-custom"},
	{name: "openshift-frr-k8s", openshift: true, monitoring: true, clusterTLS: configv1.TLSProfileOldType},
	{name: "openshift-platform-frr-k8s", openshift: true, monitoring: true, platformFRR: true},
	{name: "custom-images", env: map[string]string{
		ControllerImageEnv: "registry.example.com/metallb/controller@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		SpeakerImageEnv:    "registry.example.com/metallb/speaker:" + release.MetalLB + "-patched",
		FRRK8sImageEnv:     "registry.example.com/metallb/frr-k8s:" + release.FRRK8s + "-patched",
		FRRImageEnv:        "registry.example.com/frrouting/frr:10.4.3",
		ReleaseVersionEnv:  "4.22.0-0.example",
	}},
	{name: "frr-k8s-custom-images", env: map[string]string{
		FRRK8sImageEnv: "registry.example.com/metallb/frr-k8s:" + release.FRRK8s + "-patched",
		FRRImageEnv:    "registry.example.com/frrouting/frr@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	}},
}

// render renders a scenario with the memberlist key's placeholder.
func (sc scenario) render(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	images, err := ImagesFromEnv(func(k string) string { return sc.env[k] }, "1.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	env := Environment{Namespace: DefaultNamespace, Images: images, Webhooks: !sc.noWebhooks, Monitoring: sc.monitoring,
		OpenShift: sc.openshift, SCCAdmission: sc.openshift}
	if sc.platformFRR {
		env.PlatformFRRK8s = &PlatformFRRK8s{Namespace: OpenShiftFRRK8sNamespace, Enabled: true}
	}
	if sc.clusterTLS != "" {
		env.ClusterTLSProfile = &configv1.TLSSecurityProfile{Type: sc.clusterTLS}
	}
	s, err := SettingsFor(env, sc.object(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Render(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func (sc scenario) object(t testing.TB) *v1beta1.MetalLB {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "scenarios", sc.name+".yaml"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	obj, err := DecodeMetalLB(data)
	if err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	return obj
}

// The rendered objects of every scenario, CRDs aside (they are MetalLB's,
// verbatim, and `make verify` holds them to the pinned release), are kept as
// golden files. `go test ./pkg/network/metallb/... -update` rewrites them.
func TestRenderGolden(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			got := goldenYAML(t, sc.render(t))
			file := filepath.Join("testdata", "golden", sc.name+".yaml")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("rendered objects differ from %s (-want +got); if the change is intended, run with -update:\n%s", file, diff)
			}
		})
	}
}

func goldenYAML(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("# Rendered by TestRenderGolden; CustomResourceDefinitions are left out.\n")
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			continue
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes()
}

// The names and labels the module finds MetalLB's and frr-k8s's objects by are
// those the templates give them.
func TestNamesAreTheTemplates(t *testing.T) {
	byName := map[string]*unstructured.Unstructured{}
	frrK8s := scenarios[slices.IndexFunc(scenarios, func(sc scenario) bool { return sc.name == "frr-k8s" })]
	for _, o := range frrK8s.render(t) {
		byName[o.GetKind()+"/"+o.GetName()] = o
		if strings.Contains(o.GetName(), "frr-k8s") != strings.HasPrefix(o.GetName(), FRRK8sPrefix) && o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s %s is frr-k8s's, but its name does not begin with %q: it would be pruned with the speakers", o.GetKind(), o.GetName(), FRRK8sPrefix)
		}
	}
	for _, name := range []string{"Deployment/" + ControllerName, "DaemonSet/" + SpeakerName, "Secret/" + MemberlistSecret,
		"ValidatingWebhookConfiguration/" + WebhookConfiguration, "Service/" + WebhookService, "CustomResourceDefinition/" + BGPPeersCRD,
		"DaemonSet/" + FRRK8sName, "Deployment/" + FRRK8sStatusCleaner, "ValidatingWebhookConfiguration/" + FRRK8sWebhookConfiguration} {
		if byName[name] == nil {
			t.Errorf("no %s rendered", name)
		}
	}
	podLabels := func(name string) labels.Set {
		l, _, _ := unstructured.NestedStringMap(byName[name].Object, "spec", "template", "metadata", "labels")
		return l
	}
	if l := podLabels("DaemonSet/" + SpeakerName); !SpeakerPods.AsSelector().Matches(l) {
		t.Errorf("the speakers' pods have labels %v, which %v does not select", l, SpeakerPods)
	}
	if l := podLabels("Deployment/" + ControllerName); !NodePods.Matches(l) {
		t.Errorf("the controller's pods have labels %v, which %v does not select", l, NodePods)
	}
	if l := podLabels("DaemonSet/" + FRRK8sName); !FRRK8sPods.AsSelector().Matches(l) || !NodePods.Matches(l) {
		t.Errorf("frr-k8s's pods have labels %v, which %v or %v does not select", l, FRRK8sPods, NodePods)
	}
	if got := containerEnv(byName["DaemonSet/"+SpeakerName], "METALLB_ML_LABELS"); got != SpeakerPods.String() {
		t.Errorf("the speakers' memberlist selects %q, the module %q", got, SpeakerPods.String())
	}
}

func containerEnv(o *unstructured.Unstructured, name string) string {
	containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	for _, e := range env {
		if e := e.(map[string]any); e["name"] == name {
			v, _ := e["value"].(string)
			return v
		}
	}
	return ""
}
