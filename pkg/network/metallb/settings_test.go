package metallb

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
)

func TestBadSettingsNameTheField(t *testing.T) {
	images, err := ImagesFromEnv(func(string) string { return "" }, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec string
		want       []string // all must appear in the error
	}{
		{"unknown log level", `logLevel: loud`,
			[]string{`spec.logLevel: Unsupported value: "loud"`, `"all", "debug", "info", "warn", "error", "none"`}},
		{"malformed node selector", `nodeSelector: {"bad key!": "x"}`,
			[]string{`spec.nodeSelector: Invalid value: "bad key!"`}},
		{"malformed selector value", `controllerNodeSelector: {"example.com/role": "not a value"}`,
			[]string{`spec.controllerNodeSelector: Invalid value: "not a value"`}},
		{"toleration with value and Exists", `speakerTolerations: [{key: a, operator: Exists, value: b}]`,
			[]string{`spec.speakerTolerations[0].value: Invalid value: "b": must be empty when operator is Exists`}},
		{"tolerationSeconds without NoExecute", `speakerTolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]`,
			[]string{`spec.speakerTolerations[0].tolerationSeconds: Invalid value: 5: may only be set when effect is NoExecute`}},
		{"unknown toleration effect", `controllerTolerations: [{key: a, operator: Exists, effect: Sometimes}]`,
			[]string{`spec.controllerTolerations[0].effect: Unsupported value: "Sometimes"`}},
		{"empty key without Exists", `speakerTolerations: [{operator: Equal, value: x}]`,
			[]string{`spec.speakerTolerations[0].operator: Invalid value: "Equal": must be Exists when key is empty`}},
		{"maxUnavailable 0", `speakerConfig: {maxUnavailable: 0}`,
			[]string{`spec.speakerConfig.maxUnavailable: Invalid value: 0: must be a number of at least 1, or a percentage from 1% to 100%`}},
		{"maxUnavailable 150%", `speakerConfig: {maxUnavailable: "150%"}`,
			[]string{`spec.speakerConfig.maxUnavailable: Invalid value: "150%"`}},
		{"maxUnavailable not a percentage", `speakerConfig: {maxUnavailable: "ten"}`,
			[]string{`spec.speakerConfig.maxUnavailable: Invalid value: "ten"`}},
		{"bad load balancer class", `loadBalancerClass: "Not/A/Class"`,
			[]string{`spec.loadBalancerClass: Invalid value: "Not/A/Class"`}},
		{"unsupported BGP backend", `bgpBackend: frr-k8s`,
			[]string{`spec.bgpBackend: Unsupported value: "frr-k8s": supported values: "native"`}},
		{"affinity weight out of range", `speakerConfig: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}}`,
			[]string{`spec.speakerConfig.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be from 1 to 100`}},
		{"requests above limits", `controllerConfig: {resources: {requests: {memory: 1Gi}, limits: {memory: 100Mi}}}`,
			[]string{`spec.controllerConfig.resources.requests[memory]: Invalid value: "1Gi": must not exceed the limit 100Mi`}},
		{"bad priority class", `speakerConfig: {priorityClassName: "Urgent!"}`,
			[]string{`spec.speakerConfig.priorityClassName: Invalid value: "Urgent!"`}},
		{"two errors at once", `logLevel: loud, speakerConfig: {maxUnavailable: 0}`,
			[]string{`spec.logLevel`, `spec.speakerConfig.maxUnavailable`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := DecodeMetalLB([]byte("apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata: {name: metallb}\nspec: {" + tc.spec + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := SettingsFor(Environment{Namespace: DefaultNamespace, Images: images, Webhooks: true}, obj)
			if err == nil {
				t.Fatalf("settings accepted: %+v", s)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestDecodeRefusesUnknownFields(t *testing.T) {
	_, err := DecodeMetalLB([]byte("apiVersion: metallb.io/v1beta1\nkind: MetalLB\nspec:\n  loglevel: debug\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.loglevel"`) {
		t.Errorf("misspelt field accepted or not named: %v", err)
	}
	_, err = DecodeMetalLB([]byte("apiVersion: v1\nkind: ConfigMap\n"))
	if err == nil || !strings.Contains(err.Error(), "want a metallb.io/v1beta1 MetalLB") {
		t.Errorf("a ConfigMap was taken for a MetalLB: %v", err)
	}
}

func TestBadImagesNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{ControllerImageEnv: "Quay.io/MetalLB/controller:v1"}, `METALLB_CONTROLLER_IMAGE="Quay.io/MetalLB/controller:v1" is not a valid image reference`},
		{map[string]string{SpeakerImageEnv: "speaker:tag with space"}, `METALLB_SPEAKER_IMAGE="speaker:tag with space" is not a valid image reference`},
	} {
		_, err := ImagesFromEnv(func(k string) string { return tc.env[k] }, "1.0.0")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %v: error %v does not say %q", tc.env, err, tc.want)
		}
	}
	if _, err := ImagesFromEnv(func(string) string { return "" }, ""); err == nil || !strings.Contains(err.Error(), ReleaseVersionEnv) {
		t.Errorf("no release version at all: error %v does not name %s", err, ReleaseVersionEnv)
	}
}

func TestUnsetImagesAreUpstreams(t *testing.T) {
	images, err := ImagesFromEnv(func(k string) string { return map[string]string{ReleaseVersionEnv: "4.22.1"}[k] }, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := Images{Controller: "quay.io/metallb/controller:v0.16.1", Speaker: "quay.io/metallb/speaker:v0.16.1", ReleaseVersion: "4.22.1"}
	if images != want {
		t.Errorf("got %+v, want %+v", images, want)
	}
}

func TestMemberlistSecretIsCreateOnlyWithTheKey(t *testing.T) {
	key := NewMemberlistKey()
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 128 {
		t.Fatalf("key is not the base64 of 128 bytes: %v, %d bytes", err, len(raw))
	}
	if NewMemberlistKey() == key {
		t.Fatal("two keys are the same")
	}
	images, _ := ImagesFromEnv(func(string) string { return "" }, "1.0.0")
	s, err := SettingsFor(Environment{Namespace: DefaultNamespace, Images: images, Webhooks: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Render(s, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetName() != "memberlist" {
			continue
		}
		if !apply.CreateOnly(o) {
			t.Error("the memberlist Secret is not create-only: a reconcile would overwrite its key")
		}
		if got := o.Object["data"].(map[string]any)["secretkey"]; got != key {
			t.Errorf("secretkey is %v, want the generated key", got)
		}
		return
	}
	t.Fatal("no memberlist Secret rendered")
}
