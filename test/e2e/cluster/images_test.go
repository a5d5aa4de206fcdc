package cluster

import (
	"slices"
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
