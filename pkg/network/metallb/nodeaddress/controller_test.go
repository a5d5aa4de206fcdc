package nodeaddress

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// controller-runtime's clients and managers here log through the tests or
// not at all; without a root logger each prints a stack saying none was set.
func init() { ctrl.SetLogger(logr.Discard()) }

// What the mode writes, against a real API server with two kwok nodes: its
// class is served; a Service with no class that another controller addressed
// is left to it, with an Event, even when the scope takes Services with no
// class; once that controller lets go, the mode gives it node addresses; when
// the scope gives them back, only what the mode wrote goes; an excluded
// node's address goes from every Service; another class is never written.
func TestStatusWrites(t *testing.T) {
	env, cs := kwokCluster(t, 2)
	r := startMode(t, env)
	both := []string{"192.0.2.10", "192.0.2.11"}

	r.SetScope(decide.Scope{Enabled: true})
	createLB(t, cs, "classed", decide.Class, 80)
	createLB(t, cs, "unclassed", "", 81)
	createLB(t, cs, "foreign", "example.com/other", 82)
	setStatusAs(t, cs, "unclassed", "another-lb", "203.0.113.5")
	waitAddresses(t, cs, "classed", both)
	assertAddresses(t, cs, "unclassed", []string{"203.0.113.5"})

	r.SetScope(decide.Scope{Enabled: true, Unclassed: true})
	waitEvent(t, cs, "unclassed", "AddressedElsewhere")
	assertAddresses(t, cs, "unclassed", []string{"203.0.113.5"})
	releaseStatusAs(t, cs, "unclassed", "another-lb")
	waitAddresses(t, cs, "unclassed", both)
	setConditionAs(t, cs, "unclassed", "another-lb")

	r.SetScope(decide.Scope{Enabled: true})
	waitAddresses(t, cs, "unclassed", nil)
	if svc, err := cs.CoreV1().Services("default").Get(t.Context(), "unclassed", metav1.GetOptions{}); err != nil || len(svc.Status.Conditions) != 1 {
		t.Errorf("another manager's condition went with the mode's addresses: %v, %v", err, svc.Status)
	}

	patch := []byte(`{"metadata":{"labels":{"` + corev1.LabelNodeExcludeBalancers + `":""}}}`)
	if _, err := cs.CoreV1().Nodes().Patch(t.Context(), "kwok-1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, cs, "classed", both[:1])

	svc, err := cs.CoreV1().Services("default").Get(t.Context(), "foreign", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ownsStatus(svc.ManagedFields) || len(svc.Status.LoadBalancer.Ingress) > 0 {
		t.Errorf("the Service of another class was written: %+v", svc.Status)
	}
}

// Conflicts follow what each Service holds, against a real API server with
// one node: the oldest takes port 80 on the node's address; the next, on 80
// and 443, gets nothing; the youngest, on 443, gets the address, which nobody
// holds on 443. When the oldest goes, the next takes the address, and the
// youngest loses it to the next, once the next's status is written.
func TestConflictsFollowWhatIsHeld(t *testing.T) {
	env, cs := kwokCluster(t, 1)
	startMode(t, env).SetScope(decide.Scope{Enabled: true})
	node := []string{"192.0.2.10"}
	createLB(t, cs, "oldest", decide.Class, 80)
	waitAddresses(t, cs, "oldest", node)
	afterCreationSecondOf(t, cs, "oldest")
	createLB(t, cs, "middle", decide.Class, 80, 443)
	afterCreationSecondOf(t, cs, "middle")
	createLB(t, cs, "youngest", decide.Class, 443)
	waitAddresses(t, cs, "youngest", node)
	waitAddresses(t, cs, "middle", []string{""}) // the entry that lists its lost ports

	if err := cs.CoreV1().Services("default").Delete(t.Context(), "oldest", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, cs, "middle", node)
	waitAddresses(t, cs, "youngest", []string{""})
}

// afterCreationSecondOf waits, on the clock, until a Service created now is
// younger than the named one: creation times are whole seconds.
func afterCreationSecondOf(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	svc, err := cs.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-time.After(time.Until(svc.CreationTimestamp.Add(time.Second))):
	case <-t.Context().Done():
	}
}

// A restarted operator keeps the addresses the last one wrote: before the
// module's first plan the mode does not run, and once it runs nothing
// differs.
func TestRestartKeepsAddresses(t *testing.T) {
	env, cs := kwokCluster(t, 2)
	first, stop := startModeStoppable(t, env)
	first.SetScope(decide.Scope{Enabled: true})
	createLB(t, cs, "classed", decide.Class, 80)
	waitAddresses(t, cs, "classed", []string{"192.0.2.10", "192.0.2.11"})
	stop()
	written := resourceVersion(t, cs, "classed")

	before := reconciles(t)
	second := startMode(t, env)
	second.SetScope(decide.Scope{Enabled: true})
	waitReconciles(t, before+1) // the Service, seen by the mode as it starts
	if rv := resourceVersion(t, cs, "classed"); rv != written {
		t.Errorf("the Service was written again (resourceVersion %s, then %s) with the same addresses", written, rv)
	}
}

// Turned off, the mode removes what it wrote, and only that, with a
// NodeAddressOff Event, and turned on again it serves again, against a real
// API server with one node; a mode that starts off removes what an earlier
// operator wrote.
func TestOffRemovesWhatTheModeWrote(t *testing.T) {
	env, cs := kwokCluster(t, 1)
	node := []string{"192.0.2.10"}
	first, stop := startModeStoppable(t, env)
	first.SetScope(decide.Scope{Enabled: true})
	createLB(t, cs, "classed", decide.Class, 80)
	createLB(t, cs, "elsewhere", "", 81)
	setStatusAs(t, cs, "elsewhere", "another-lb", "203.0.113.5")
	waitAddresses(t, cs, "classed", node)

	first.SetScope(decide.Scope{})
	waitAddresses(t, cs, "classed", nil)
	waitEvent(t, cs, "classed", "NodeAddressOff")
	waitAddresses(t, cs, "elsewhere", []string{"203.0.113.5"})
	first.SetScope(decide.Scope{Enabled: true})
	waitAddresses(t, cs, "classed", node)
	stop()

	startMode(t, env).SetScope(decide.Scope{})
	waitAddresses(t, cs, "classed", nil)
}

func resourceVersion(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	svc, err := cs.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.ResourceVersion
}

// reconciles is how many reconciles the mode's controllers of this test
// process made, from controller-runtime's metrics.
func reconciles(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "node-address" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

func waitReconciles(t *testing.T, atLeast float64) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return reconciles(t) >= atLeast, nil
	})
	if err != nil {
		t.Fatalf("the mode made %v reconciles, want at least %v", reconciles(t), atLeast)
	}
}

// kwokCluster starts a control plane with kwok nodes for a test that runs
// beside the others, and a client of it.
func kwokCluster(t *testing.T, nodes int) (*testenv.Env, kubernetes.Interface) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	env := testenv.New(t, testenv.Options{Kwok: true, Nodes: testenv.Nodes(nodes)})
	return env, kubernetes.NewForConfigOrDie(env.Config)
}

// startMode runs the mode in a manager whose Node cache keeps what the
// operator's keeps, until the test ends.
func startMode(t *testing.T, env *testenv.Env) *Reconciler {
	t.Helper()
	r, _ := startModeStoppable(t, env)
	return r
}

// startModeStoppable is startMode, with a function that stops the manager.
func startModeStoppable(t *testing.T, env *testenv.Env) (*Reconciler, func()) {
	t.Helper()
	mode := NewModule()
	s, err := operator.NewScheme(mode)
	if err != nil {
		t.Fatal(err)
	}
	mo := ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
		Controller:             config.Controller{SkipNameValidation: new(true)},
	}
	if err := mode.ConfigureManager(&mo); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, mo)
	if err != nil {
		t.Fatal(err)
	}
	if err := mode.Add(t.Context(), mgr, publish.Reporter{}); err != nil {
		t.Fatal(err)
	}
	r := mode.r
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return r, stop
}

func createLB(t *testing.T, cs kubernetes.Interface, name, class string, ports ...int32) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprint(p), Port: p})
	}
	if class != "" {
		svc.Spec.LoadBalancerClass = &class
	}
	if _, err := cs.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setStatusAs writes a Service's address as another load balancer controller.
func setStatusAs(t *testing.T, cs kubernetes.Interface, name, manager, ip string) {
	t.Helper()
	ac := corev1ac.Service(name, "default").WithStatus(corev1ac.ServiceStatus().WithLoadBalancer(
		corev1ac.LoadBalancerStatus().WithIngress(corev1ac.LoadBalancerIngress().WithIP(ip).WithIPMode(corev1.LoadBalancerIPModeVIP))))
	if _, err := cs.CoreV1().Services("default").ApplyStatus(t.Context(), ac, metav1.ApplyOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// releaseStatusAs has a manager give up what it wrote in a Service's status.
func releaseStatusAs(t *testing.T, cs kubernetes.Interface, name, manager string) {
	t.Helper()
	if _, err := cs.CoreV1().Services("default").ApplyStatus(t.Context(), corev1ac.Service(name, "default"), metav1.ApplyOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an Event of the reason on the Service.
func waitEvent(t *testing.T, cs kubernetes.Interface, name, reason string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
		return err == nil && slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.Name == name }), nil
	})
	if err != nil {
		t.Fatalf("no %s Event on Service %s", reason, name)
	}
}

// setConditionAs writes a condition into a Service's status as another manager.
func setConditionAs(t *testing.T, cs kubernetes.Interface, name, manager string) {
	t.Helper()
	ac := corev1ac.Service(name, "default").WithStatus(corev1ac.ServiceStatus().WithConditions(
		metav1ac.Condition().WithType("Checked").WithStatus(metav1.ConditionTrue).WithReason("Checked").
			WithLastTransitionTime(metav1.Now())))
	if _, err := cs.CoreV1().Services("default").ApplyStatus(t.Context(), ac, metav1.ApplyOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

func waitAddresses(t *testing.T, cs kubernetes.Interface, name string, want []string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = addressesNow(ctx, cs, name)
		return err == nil && slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("Service %s: addresses %v, want %v", name, got, want)
	}
}

func assertAddresses(t *testing.T, cs kubernetes.Interface, name string, want []string) {
	t.Helper()
	got, err := addressesNow(t.Context(), cs, name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Service %s: addresses %v, want %v", name, got, want)
	}
}

func addressesNow(ctx context.Context, cs kubernetes.Interface, name string) ([]string, error) {
	svc, err := cs.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		out = append(out, in.IP)
	}
	return out, nil
}
