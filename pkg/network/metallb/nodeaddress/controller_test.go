package nodeaddress

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// What the mode writes, against a real API server with two kwok nodes: its
// class is served; a Service another controller addressed is left alone until
// the scope takes Services with no class, then given node addresses; when the
// scope gives them back, only what the mode wrote goes; an excluded node's
// address goes from every Service; another class is never written.
func TestStatusWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	env := testenv.New(t, testenv.Options{Kwok: true, Nodes: testenv.Nodes(2)})
	cs := kubernetes.NewForConfigOrDie(env.Config)
	r := startMode(t, env)
	both := []string{"192.0.2.10", "192.0.2.11"}

	r.SetScope(Scope{Enabled: true})
	createLB(t, cs, "classed", Class, 80)
	createLB(t, cs, "unclassed", "", 81)
	createLB(t, cs, "foreign", "example.com/other", 82)
	setStatusAs(t, cs, "unclassed", "another-lb", "203.0.113.5")
	waitAddresses(t, cs, "classed", both)
	assertAddresses(t, cs, "unclassed", []string{"203.0.113.5"})

	r.SetScope(Scope{Enabled: true, Unclassed: true})
	waitAddresses(t, cs, "unclassed", both)
	setConditionAs(t, cs, "unclassed", "another-lb")

	r.SetScope(Scope{Enabled: true})
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

// startMode runs the mode in a manager whose Node cache keeps what the
// operator's keeps.
func startMode(t *testing.T, env *testenv.Env) *Reconciler {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
		Controller:             config.Controller{SkipNameValidation: new(true)},
		Cache:                  cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: KeepNodeFields}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Add(mgr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return r
}

func createLB(t *testing.T, cs kubernetes.Interface, name, class string, port int32) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: port}}}}
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
