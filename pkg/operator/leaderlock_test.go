package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

func TestLeaderIdentityIsThePodsName(t *testing.T) {
	env := func(pod string) func(string) string {
		return func(name string) string {
			if name == PodNameEnv {
				return pod
			}
			return ""
		}
	}
	if id, err := leaderIdentity(env("cluster-network-operator-5d8f-x2v")); err != nil || id != "cluster-network-operator-5d8f-x2v" {
		t.Errorf("in a pod: identity %q (%v), want the pod's name", id, err)
	}
	first, err1 := leaderIdentity(env(""))
	second, err2 := leaderIdentity(env(""))
	if err := errors.Join(err1, err2); err != nil || first == second || !strings.Contains(first, "_") {
		t.Errorf("out of a pod: identities %q and %q (%v), want the host's name and a random part, differing", first, second, err)
	}
}

func TestPassingErrors(t *testing.T) {
	lease := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewServiceUnavailable("etcd leader changed"), true},
		{apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewTimeoutError("timed out", 1), true},
		{apierrors.NewServerTimeout(lease, "update", 1), true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{errRetryUpdate{apierrors.NewConflict(lease, LeaseName, errors.New("modified"))}, true},
		{apierrors.NewConflict(lease, LeaseName, errors.New("modified")), false},
		{apierrors.NewForbidden(lease, LeaseName, errors.New("no RBAC")), false},
		{apierrors.NewNotFound(lease, LeaseName), false},
		{apierrors.NewAlreadyExists(lease, LeaseName), false},
	} {
		if got := passing(tc.err); got != tc.want {
			t.Errorf("passing(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// TestLeaderActsWithinSecondsOfAnError runs client-go's elector with the
// operator's lock and OpenShift's timings (a retry every 26 s) against a real
// API server, each case in a namespace of its own.
func TestLeaderActsWithinSecondsOfAnError(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	timings, err := leaseTimings(DefaultOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		held  *string // the Lease's holder before the elector starts ("" released); nil: no Lease
		fault *fault  // what the API server is made to answer once
	}{
		{name: "the first Lease create answered 503", fault: &fault{method: http.MethodPost, suffix: "/leases", code: http.StatusServiceUnavailable}},
		{name: "the first Lease create answered 429", fault: &fault{method: http.MethodPost, suffix: "/leases", code: http.StatusTooManyRequests}},
		{name: "an update of a released Lease answered 409", held: new(""), fault: &fault{method: http.MethodPut, suffix: "/" + LeaseName, code: http.StatusConflict}},
		{name: "a container restarted in its pod", held: new("pod-a")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := createNamespace(t, client)
			if tc.held != nil {
				createLease(t, client, ns, *tc.held, timings.LeaseDuration)
			}
			cfg := rest.CopyConfig(env.Config)
			if tc.fault != nil {
				cfg.WrapTransport = tc.fault.wrap
			}
			took := elect(t, cfg, ns, "pod-a", timings)
			if took > 5*time.Second {
				t.Errorf("the elector led %s after it started; want within 5 s (its retry period is %s)", took, timings.RetryPeriod)
			}
			if tc.fault != nil && tc.fault.answered.Load() != 1 {
				t.Errorf("the fault was injected %d times, want once", tc.fault.answered.Load())
			}
		})
	}
}

// elect runs an elector as identity until the test ends, and returns how
// long it took to lead.
func elect(t *testing.T, cfg *rest.Config, namespace, identity string, timings LeaseTimings) time.Duration {
	t.Helper()
	events, stopEvents := context.WithCancel(context.Background())
	lock, err := newLeaderLock(events, cfg, namespace, identity, timings)
	if err != nil {
		t.Fatal(err)
	}
	led := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: timings.LeaseDuration, RenewDeadline: timings.RenewDeadline, RetryPeriod: timings.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) { close(led) }, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	t.Cleanup(func() { cancel(); <-stopped; stopEvents() })
	start := time.Now()
	go func() { defer close(stopped); le.Run(ctx) }()
	select {
	case <-led:
		return time.Since(start)
	case <-time.After(2 * timings.RetryPeriod):
		t.Fatalf("the elector did not lead within %s", 2*timings.RetryPeriod)
		return 0
	}
}

// fault answers the first request of a method to a path ending in suffix
// with code, in place of the API server.
type fault struct {
	method, suffix string
	code           int
	answered       atomic.Int32
}

func (f *fault) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != f.method || !strings.HasSuffix(r.URL.Path, f.suffix) || !f.answered.CompareAndSwap(0, 1) {
			return rt.RoundTrip(r)
		}
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected by the test","code":%d}`, f.code)
		return &http.Response{StatusCode: f.code, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func createNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lease-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// createLease creates the operator's Lease as holder left it: renewed just
// now, or released ("").
func createLease(t *testing.T, client kubernetes.Interface, namespace, holder string, duration time.Duration) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(duration / time.Second)
	if holder == "" {
		seconds = 1 // as client-go releases it
	}
	_, err := client.CoordinationV1().Leases(namespace).Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LeaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
