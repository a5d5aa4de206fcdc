package manifests

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

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
		{map[string]string{FRRK8sImageEnv: "frr-k8s:"}, `FRRK8S_IMAGE="frr-k8s:" is not a valid image reference`},
		{map[string]string{FRRImageEnv: "FRR"}, `FRR_IMAGE="FRR" is not a valid image reference`},
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
	want := Images{Controller: "quay.io/metallb/controller:" + release.MetalLB, Speaker: "quay.io/metallb/speaker:" + release.MetalLB,
		FRRK8s: "quay.io/metallb/frr-k8s:" + release.FRRK8s, FRR: "quay.io/frrouting/frr:10.4.3", ReleaseVersion: "4.22.1"}
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
		if !objects.CreateOnly(o) {
			t.Error("the memberlist Secret is not create-only: a reconcile would overwrite its key")
		}
		if got := o.Object["data"].(map[string]any)["secretkey"]; got != key {
			t.Errorf("secretkey is %v, want the generated key", got)
		}
		return
	}
	t.Fatal("no memberlist Secret rendered")
}
