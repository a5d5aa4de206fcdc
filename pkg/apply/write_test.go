package apply

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// A write that fails does not cut the others of its wave short: a ConfigMap
// whose write is on its way when its sibling's is answered 500 is written,
// and the change is told; the failure is told too.
func TestWaveRunsToItsEnd(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	cfg := rest.CopyConfig(env.Config)
	failed := make(chan struct{})
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch {
			case strings.HasSuffix(req.URL.Path, "/configmaps/fails"):
				defer close(failed)
				return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{},
					Body: io.NopCloser(bytes.NewReader(nil)), Request: req}, nil
			case strings.HasSuffix(req.URL.Path, "/configmaps/slow"):
				// On its way once the sibling failed: a cancellation would
				// come within the second it is held.
				<-failed
				select {
				case <-req.Context().Done():
					return nil, req.Context().Err()
				case <-time.After(time.Second):
				}
			}
			return rt.RoundTrip(req)
		})
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &Applier{Client: c, FieldOwner: "test"}
	changes, err := a.Write(t.Context(), []*unstructured.Unstructured{namedConfigMap("fails"), namedConfigMap("slow")}, func(*unstructured.Unstructured) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "ConfigMap default/fails") {
		t.Errorf("the failed write was told as %v", err)
	}
	if len(changes) != 1 || changes[0].Object.GetName() != "slow" {
		t.Errorf("changes %v, want the slow ConfigMap's", changes)
	}
	if err := env.Client(t, nil).Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "slow"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the slow ConfigMap was not written: %v", err)
	}
}

func namedConfigMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"k": "v"},
	}}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
