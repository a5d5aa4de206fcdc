package noderunner

import (
	"slices"
	"testing"
)

func TestBinaryOfAnImage(t *testing.T) {
	r := &Runner{opts: Options{Binaries: map[string]string{
		"speaker":            "/bin/speaker-current",
		"speaker:v0.15.2":    "/bin/speaker-previous",
		"controller:v0.15.2": "/bin/controller-previous",
	}}}
	for _, tc := range []struct{ image, want, inContainer string }{
		{"quay.io/metallb/speaker:v0.16.1", "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/speaker:v0.15.2", "/bin/speaker-previous", "/speaker"},
		{"quay.io/metallb/speaker", "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/speaker:v0.15.2@sha256:0123", "/bin/speaker-previous", "/speaker"},
		{"registry:5000/metallb/speaker", "/bin/speaker-current", "/speaker"},
		{"quay.io/metallb/controller:v0.15.2", "/bin/controller-previous", "/controller"},
	} {
		got, inContainer, err := r.binary(tc.image)
		if err != nil || got != tc.want || inContainer != tc.inContainer {
			t.Errorf("%s: %s at %s (%v), want %s at %s", tc.image, got, inContainer, err, tc.want, tc.inContainer)
		}
	}
	// A tag the map does not name, of an image it has no default for.
	if got, _, err := r.binary("quay.io/metallb/controller:v0.16.1"); err == nil {
		t.Errorf("controller:v0.16.1 ran %s, want an error: only v0.15.2 has a binary", got)
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
