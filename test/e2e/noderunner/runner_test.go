package noderunner

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// An image is found by its whole reference, completed as a runtime completes
// it; another registry, organisation or tag of a known image fails to pull.
func TestPullByWholeReference(t *testing.T) {
	known := map[string]Image{
		"quay.io/metallb/speaker:v0.16.1":  {Entrypoint: []string{"/speaker"}},
		"docker.io/library/busybox:latest": {Entrypoint: []string{"/bin/sh"}},
	}
	r := &Runner{opts: Options{Pull: func(ref string) (Image, error) {
		if im, ok := known[ref]; ok {
			return im, nil
		}
		return Image{}, errors.New("not found")
	}}}
	for _, tc := range []struct{ image, reason, entrypoint string }{
		{image: "quay.io/metallb/speaker:v0.16.1", entrypoint: "/speaker"},
		{image: "busybox", entrypoint: "/bin/sh"},
		{image: "docker.io/busybox:latest", entrypoint: "/bin/sh"},
		{image: "registry.example.com/metallb/speaker:v0.16.1", reason: "ErrImagePull"},
		{image: "quay.io/other/speaker:v0.16.1", reason: "ErrImagePull"},
		{image: "quay.io/metallb/speaker:v0.16.0", reason: "ErrImagePull"},
		{image: "quay.io/metallb/speaker", reason: "ErrImagePull"},
		{image: "Quay.io/METALLB/speaker:v0.16.1", reason: "InvalidImageName"},
	} {
		im, err := r.pull(containerOf(tc.image))
		var pe *pullError
		switch {
		case tc.reason == "" && (err != nil || !slices.Equal(im.Entrypoint, []string{tc.entrypoint})):
			t.Errorf("%s: %v, %v; want the image of %s", tc.image, im, err, tc.entrypoint)
		case tc.reason != "" && (!errors.As(err, &pe) || pe.reason != tc.reason):
			t.Errorf("%s: %v; want %s", tc.image, err, tc.reason)
		}
	}
}

// A container runs its command, or the image's entry point when it names
// none, then its arguments; a command the image replaces runs the
// replacement.
func TestArgvAsARuntime(t *testing.T) {
	im := Image{Entrypoint: []string{"/speaker"}, Commands: map[string][]string{"/bin/sh -c start": {"/start.sh"}}}
	for _, tc := range []struct {
		command, args, want []string
	}{
		{nil, []string{"--port=7472"}, []string{"/speaker", "--port=7472"}},
		{[]string{"/controller"}, []string{"--port=7472"}, []string{"/controller", "--port=7472"}},
		{[]string{"/bin/sh", "-c"}, []string{"start"}, []string{"/start.sh"}},
	} {
		if got, err := im.argv(tc.command, tc.args); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("command %q args %q: %q, %v; want %q", tc.command, tc.args, got, err, tc.want)
		}
	}
	if got, err := (Image{}).argv(nil, nil); err == nil {
		t.Errorf("no command and no entry point ran %q; want the runtime's error", got)
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

func containerOf(image string) corev1.Container { return corev1.Container{Name: "c", Image: image} }
