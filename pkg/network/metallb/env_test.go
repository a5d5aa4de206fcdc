package metallb

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

func init() {
	// Each test's manager logs through the test; nothing else should log.
	ctrl.SetLogger(logr.Discard())
}

// testScheme is the operator's, for the modules the tests run.
var testScheme = func() *runtime.Scheme {
	s, err := operator.NewScheme(NewModule(nil), nodeaddress.NewModule())
	if err != nil {
		panic(err)
	}
	return s
}()

// moduleEnv is a control plane with the MetalLB module running against it, as
// the operator runs it, and MetalLB's namespace created as a user would.
type moduleEnv struct {
	*testenv.Env
	client client.Client
	r      *Reconciler
	// written counts the mutating requests the module made by method and
	// resource, Events included; events counts the Events the module gives.
	mu      sync.Mutex
	written map[string]int
	// watches counts the watches the module opened by resource, those of
	// metadata only with " (metadata)".
	watches map[string]int
	events  atomic.Int64
	// faults, when set before run, are injected into the module's requests
	// but its Events' writes; transports, set before run, wrap them too.
	faults     *testenv.Faults
	transports []func(http.RoundTripper) http.RoundTripper
	stop       func()
	// serving is the profile of the operator's own TLS endpoints, which the
	// module sets.
	serving *tlsprofile.Serving
}

func testOptions() Options {
	images, err := manifests.ImagesFromEnv(func(string) string { return "" }, "1.0.0-test")
	if err != nil {
		panic(err)
	}
	// kwok nodes run no webhook server; see docs on --metallb-webhooks.
	return Options{Options: plan.Options{
		Environment:      manifests.Environment{Namespace: manifests.DefaultNamespace, Images: images},
		AllowedPlatforms: plan.DefaultAllowedPlatforms,
		HungAfter:        10 * time.Minute,
	}}
}

// startModule starts a control plane, and the module against it with opts.
func startModule(t testing.TB, envOpts testenv.Options, opts Options) *moduleEnv {
	t.Helper()
	m := newModuleEnv(t, envOpts)
	m.run(t, opts)
	return m
}

// newModuleEnv starts a control plane with the MetalLB object's API and
// MetalLB's namespace: the module is not running yet.
func newModuleEnv(t testing.TB, envOpts testenv.Options) *moduleEnv {
	t.Helper()
	env := testenv.New(t, envOpts)
	m := &moduleEnv{Env: env, client: env.Client(t, testScheme)}
	if err := InstallAPI(t.Context(), m.client); err != nil {
		t.Fatal(err)
	}
	if err := m.client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manifests.DefaultNamespace}}); err != nil {
		t.Fatal(err)
	}
	return m
}

// within is how long a story waits for what takes d without faults: longer
// when the module's requests meet faults.
func (m *moduleEnv) within(d time.Duration) time.Duration {
	if m.faults == nil {
		return d
	}
	return faultSlack * d
}

func clientWithWatch(env *testenv.Env) (client.WithWatch, error) {
	return client.NewWithWatch(env.Config, client.Options{Scheme: testScheme})
}

// toUnstructured converts a typed object that knows its kind.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	gvks, _, err := testScheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	u.SetGroupVersionKind(gvks[0])
	return u, nil
}

// run runs the module until stop is called or the test ends.
func (m *moduleEnv) run(t testing.TB, opts Options) {
	t.Helper()
	cfg := rest.CopyConfig(m.Config)
	if m.faults != nil {
		cfg.Wrap(m.sparingEvents) // inside the count: every attempt counts
	}
	for _, wrap := range m.transports {
		cfg.Wrap(wrap)
	}
	cfg.Wrap(transient.RetryEventWrites) // as the operator's manager does
	cfg.Wrap(m.counting)
	cfg.Dial = transient.PatientDial(nil) // as the operator's configuration does
	mo := ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 testr.NewWithInterface(t, testr.Options{Verbosity: 1}),
		Controller:             config.Controller{SkipNameValidation: new(true)}, // one manager per test
	}
	m.serving = &tlsprofile.Serving{}
	module, err := newModule(opts, nodeaddress.NewModule())
	if err != nil {
		t.Fatal(err)
	}
	modules := []operator.Module{module, module.nodeAddress}
	if err := operator.ConfigureManager(&mo, modules); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		t.Fatal(err)
	}
	if err := operator.AddModules(t.Context(), mgr, m.client, operator.Options{Modules: modules}, m.serving); err != nil {
		t.Fatal(err)
	}
	m.r = module.reconciler
	m.r.events = countingRecorder{EventRecorder: m.r.events, count: &m.events}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	m.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(m.stop)
}

// counting counts the module's writes and watches.
func (m *moduleEnv) counting(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			m.countWrite(req)
		} else if req.URL.Query().Get("watch") == "true" {
			m.countWatch(req)
		}
		return rt.RoundTrip(req)
	})
}

func (m *moduleEnv) countWrite(req *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.written == nil {
		m.written = map[string]int{}
	}
	m.written[req.Method+" "+writtenResource(req.URL.Path)]++
}

func (m *moduleEnv) countWatch(req *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watches == nil {
		m.watches = map[string]int{}
	}
	key := writtenResource(req.URL.Path)
	if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
		key += " (metadata)"
	}
	m.watches[key]++
}

// watchCounts returns how many watches of each resource the module opened.
func (m *moduleEnv) watchCounts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.watches)
}

// writeCounts returns how many writes of each kind the module made so far.
func (m *moduleEnv) writeCounts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.written)
}

// writes counts the writes the module made but Events, which its recorder
// sends in the background, at a time of its own.
func (m *moduleEnv) writes() int {
	n := 0
	for kind, c := range m.writeCounts() {
		if _, resource, _ := strings.Cut(kind, " "); !isEventPath(resource) {
			n += c
		}
	}
	return n
}

// writesSince returns how many writes, Events included, the module made
// since it had made those counted in before, and of which kinds.
func (m *moduleEnv) writesSince(before map[string]int) (int, string) {
	since, n := map[string]int{}, 0
	for kind, c := range m.writeCounts() {
		if d := c - before[kind]; d > 0 {
			since[kind], n = d, n+d
		}
	}
	return n, fmt.Sprint(since)
}

// writtenResource is a request path without its API prefix and version:
// "namespaces/metallb-system/metallbs/metallb/status".
func writtenResource(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if parts[0] == "api" {
		return strings.Join(parts[2:], "/")
	}
	return strings.Join(parts[min(3, len(parts)):], "/")
}

// sparingEvents wraps rt with the faults, but for Events: client-go's
// recorder sends them best effort, dropping one the API server refuses (it
// retries only when the server cannot be reached), and a story that checks
// an Event would fail for that design, not for the module.
func (m *moduleEnv) sparingEvents(rt http.RoundTripper) http.RoundTripper {
	faulty := m.faults.Wrap(rt)
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if isEventPath(req.URL.Path) {
			return rt.RoundTrip(req)
		}
		return faulty.RoundTrip(req)
	})
}

// isEventPath tells whether a request's path is that of Events: .../events or
// .../events/NAME.
func isEventPath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	n := len(parts)
	return parts[n-1] == "events" || (n > 1 && parts[n-2] == "events")
}

// countingRecorder counts the Events given through the module's recorder.
type countingRecorder struct {
	recorder.EventRecorder
	count *atomic.Int64
}

func (r countingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.count.Add(1)
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// waitDegraded waits until the MetalLB object's status describes its current
// generation and its Degraded condition satisfies ok; it returns the condition.
func (m *moduleEnv) waitDegraded(t *testing.T, key client.ObjectKey, ok func(metav1.Condition) bool) metav1.Condition {
	t.Helper()
	return m.waitDegradedWithin(t, key, 20*time.Second, ok)
}

// waitDegradedWithin is waitDegraded, waiting up to timeout.
func (m *moduleEnv) waitDegradedWithin(t *testing.T, key client.ObjectKey, timeout time.Duration, ok func(metav1.Condition) bool) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj := &v1beta1.MetalLB{}
		if err := m.client.Get(ctx, key, obj); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(obj.Status.Conditions, status.Degraded)
		if c == nil || c.ObservedGeneration != obj.Generation {
			return false, nil
		}
		got = *c
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("MetalLB %s: Degraded condition not as expected within %s; last seen %+v: %v", key, timeout, got, err)
	}
	return got
}

// waitFor polls cond until it holds.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get reads an object as unstructured; nil when it does not exist.
func (m *moduleEnv) get(t testing.TB, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	err := m.client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, o)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return o
}

var serviceAccountGVK = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}

// createPool creates an IPAddressPool, as a user activating MetalLB would.
func (m *moduleEnv) createPool(t testing.TB, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(manifests.IPAddressPoolKind)
	pool.SetNamespace(namespace)
	pool.SetName(name)
	_ = unstructured.SetNestedStringSlice(pool.Object, []string{"192.0.2.100-192.0.2.110"}, "spec", "addresses")
	if err := m.client.Create(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}
