package noderunner

import (
	"slices"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

func TestBinaryOfAnImage(t *testing.T) {
	current, previous := release.MetalLB, release.PreviousMetalLB
	r := &Runner{opts: Options{Binaries: map[string]string{
		"speaker":                "/bin/speaker-current",
		"speaker:" + previous:    "/bin/speaker-previous",
		"controller:" + previous: "/bin/controller-previous",
	}}}
	for _, tc := range []struct{ image, want, inContainer string }{
		{"quay.io/metallb/speaker:" + current, "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/speaker:" + previous, "/bin/speaker-previous", "/speaker"},
		{"quay.io/metallb/speaker", "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/speaker:" + previous + "@sha256:0123", "/bin/speaker-previous", "/speaker"},
		{"registry:5000/metallb/speaker", "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/controller:" + previous, "/bin/controller-previous", "/controller"},
	} {
		got, inContainer, err := r.binary(tc.image)
		if err != nil || got != tc.want || inContainer != tc.inContainer {
			t.Errorf("%s: %s at %s (%v), want %s at %s", tc.image, got, inContainer, err, tc.want, tc.inContainer)
		}
	}
	// A tag the map does not name, of an image it has no default for.
	if got, _, err := r.binary("quay.io/metallb/controller:" + current); err == nil {
		t.Errorf("controller:%s ran %s, want an error: only %s has a binary", current, got, previous)
	}
}

func TestExpandAsAKubelet(t *testing.T) {
	env := []string{"NODE_NAME=kwok-0", "EMPTY="}
	got := expandAll([]string{"--node-name=$(NODE_NAME)", "$(EMPTY)x", "$$(NODE_NAME)", "$(UNSET)", "a$", "$(NODE_NAME"}, env)
	want := []string{"--node-name=kwok-0", "x", "$(NODE_NAME)", "$(UNSET)", "a$", "$(NODE_NAME"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
