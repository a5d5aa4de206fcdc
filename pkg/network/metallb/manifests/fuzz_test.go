package manifests

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzSettingsFor feeds MetalLB objects to the settings: whatever the input, it
// never panics, and every object yields either settings that render, with the
// values asked for, or an error whose every part names a field of the spec.
//
//	go test ./pkg/network/metallb -run '^$' -fuzz FuzzSettingsFor -fuzztime 1m
func FuzzSettingsFor(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.yaml"))
	for _, file := range seeds {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"apiVersion":"metallb.io/v1beta1","kind":"MetalLB","spec":{"speakerConfig":{"priorityClassName":"123","maxUnavailable":"100%"}}}`))
	f.Add([]byte(`{"apiVersion":"metallb.io/v1beta1","kind":"MetalLB","spec":{"nodeSelector":{"a":"null"},"speakerTolerations":[{"key":"k","operator":"Equal","value":"true"}]}}`))
	images, err := ImagesFromEnv(func(string) string { return "" }, "1.0.0")
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := DecodeMetalLB(data)
		if err != nil {
			return // not a MetalLB object: the API server would refuse it
		}
		s, err := SettingsFor(Environment{Namespace: DefaultNamespace, Images: images, Webhooks: true}, obj)
		if err != nil {
			assertFieldErrors(t, err)
			return
		}
		objs, err := Render(s, "")
		if err != nil {
			t.Fatalf("valid settings do not render: %v\nsettings: %+v", err, s)
		}
		assertRenderedAsAsked(t, s, objs)
	})
}

func assertFieldErrors(t *testing.T, err error) {
	t.Helper()
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		t.Fatalf("error is not a list of field errors: %v", err)
	}
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) || !strings.HasPrefix(fe.Field, "spec.") {
			t.Fatalf("error does not name a field of the spec: %v", e)
		}
	}
}

// assertRenderedAsAsked checks that values reach the speaker DaemonSet as the
// strings they are, whatever YAML would make of them unquoted.
func assertRenderedAsAsked(t *testing.T, s Settings, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "DaemonSet" {
			continue
		}
		pod := o.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		want := cmp.Or(s.Speaker.PriorityClassName, speakerDefaults.priorityClassName)
		if got, _ := pod["priorityClassName"].(string); got != want {
			t.Fatalf("priorityClassName rendered as %#v, want %q", pod["priorityClassName"], want)
		}
		selector, _ := pod["nodeSelector"].(map[string]any)
		for k, v := range s.Speaker.NodeSelector {
			if selector[k] != v {
				t.Fatalf("nodeSelector[%q] rendered as %#v, want %q", k, selector[k], v)
			}
		}
		return
	}
	t.Fatal("no DaemonSet rendered")
}
