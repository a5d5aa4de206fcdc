package transient

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The writes of Events answered with a server error, or a 429 without a
// Retry-After, are tried again, the same body each time, after a back-off
// that doubles, five tries in all; client-go's REST client tries again what
// comes with a Retry-After, and nothing else is tried again.
func TestRetryEventWrites(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		answers            []int
		retryAfter         bool
		wantTries          int
		wantCode           int
	}{
		{"an Event created at the third try", "POST", "/apis/events.k8s.io/v1/namespaces/demo/events", []int{500, 429, 201}, false, 3, 201},
		{"a series patched at the second", "PATCH", "/api/v1/namespaces/demo/events/web.1", []int{502, 200}, false, 2, 200},
		{"five tries, then the answer", "POST", "/api/v1/namespaces/demo/events", []int{500, 500, 500, 500, 500, 201}, false, 5, 500},
		{"a Retry-After is client-go's to honour", "POST", "/api/v1/namespaces/demo/events", []int{503, 201}, true, 1, 503},
		{"a conflict is no failure of the server", "POST", "/api/v1/namespaces/demo/events", []int{409, 201}, false, 1, 409},
		{"not an Event", "POST", "/api/v1/namespaces/demo/configmaps", []int{500, 201}, false, 1, 500},
		{"an Event read", "GET", "/api/v1/namespaces/demo/events", []int{500, 200}, false, 1, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bodies []string
			next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				body := ""
				if req.Body != nil {
					b, _ := io.ReadAll(req.Body)
					body = string(b)
				}
				bodies = append(bodies, body)
				resp := &http.Response{StatusCode: tc.answers[len(bodies)-1], Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}
				if tc.retryAfter {
					resp.Header.Set("Retry-After", "1")
				}
				return resp, nil
			})
			var waits []time.Duration
			rt := eventRetry{next: next, sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			req, err := http.NewRequest(tc.method, "https://apiserver"+tc.path, strings.NewReader(`{"note":"act"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != tc.wantCode || len(bodies) != tc.wantTries {
				t.Fatalf("answered %v (%v) after %d tries, want %d after %d", resp.StatusCode, err, len(bodies), tc.wantCode, tc.wantTries)
			}
			if slices.ContainsFunc(bodies, func(b string) bool { return b != `{"note":"act"}` }) {
				t.Errorf("bodies sent %q, want the request's each time", bodies)
			}
			want := []time.Duration{400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}[:tc.wantTries-1]
			if !slices.Equal(waits, want) {
				t.Errorf("waited %v, want %v", waits, want)
			}
		})
	}
}

// A retry ends with the request's context.
func TestRetryEventWritesEndsWithTheRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		cancel()
		return &http.Response{StatusCode: 500, Header: http.Header{}, Body: http.NoBody}, nil
	})
	req, _ := http.NewRequestWithContext(ctx, "POST", "https://apiserver/api/v1/namespaces/demo/events", strings.NewReader("{}"))
	if _, err := RetryEventWrites(next).RoundTrip(req); err != context.Canceled {
		t.Errorf("error %v, want the context's", err)
	}
}
