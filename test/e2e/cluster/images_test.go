package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

// frr-k8s's image follows MetalLB's tag past the operand's release, and is
// frr-k8s's release for any other tag.
func TestReleaseTagsFRRK8sLikeMetalLB(t *testing.T) {
	for _, tc := range []struct{ tag, frrK8s string }{
		{release.MetalLB, release.FRRK8s},
		{release.MetalLB + "-1", release.FRRK8s + "-1"},
		{release.PreviousMetalLB, release.FRRK8s},
	} {
		env := Release("4.22.1", tc.tag)
		want := []string{"RELEASE_VERSION=4.22.1",
			"METALLB_CONTROLLER_IMAGE=quay.io/metallb/controller:" + tc.tag,
			"METALLB_SPEAKER_IMAGE=quay.io/metallb/speaker:" + tc.tag,
			"FRRK8S_IMAGE=quay.io/metallb/frr-k8s:" + tc.frrK8s}
		if !slices.Equal(env, want) {
			t.Errorf("Release(%q):\n got %q\nwant %q", tc.tag, env, want)
		}
	}
}

// The nodes pull every image the releases' environments name, the previous
// release's frr-k8s and FRR included, and nothing else: another registry,
// organisation or tag fails to pull.
func TestRegistryHoldsWhatTheReleasesName(t *testing.T) {
	images, err := registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{release.MetalLB, nextTag, release.PreviousMetalLB} {
		for _, kv := range Release("4.22.0", tag)[1:] {
			_, ref, _ := strings.Cut(kv, "=")
			if _, ok := images[ref]; !ok {
				t.Errorf("%s names %s, which the nodes cannot pull", tag, ref)
			}
		}
	}
	for _, ref := range []string{"registry.example.com/metallb/speaker:" + release.MetalLB, "quay.io/other/speaker:" + release.MetalLB,
		"quay.io/metallb/speaker:v0.0.1", "quay.io/metallb/speaker:latest"} {
		if _, err := pullFrom(images)(ref); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: %v, want not found", ref, err)
		}
	}
}
