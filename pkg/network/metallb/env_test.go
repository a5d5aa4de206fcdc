package metallb

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}()

// moduleEnv is a control plane with the MetalLB module running against it, as
// the operator runs it, and its namespace created as a user would.
type moduleEnv struct {
	*testenv.Env
	client client.Client
}

func startModule(t *testing.T) *moduleEnv {
	t.Helper()
	env := testenv.New(t, testenv.Options{})
	c, err := client.New(env.Config, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := InstallAPI(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}}); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: new(true)}, // one manager per test
	})
	if err != nil {
		t.Fatal(err)
	}
	images, err := ImagesFromEnv(func(string) string { return "" }, "1.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := Add(mgr, DefaultNamespace, images); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &moduleEnv{Env: env, client: c}
}

// waitCondition waits until the MetalLB object's status describes its current
// generation and its Degraded condition satisfies ok; it returns the condition.
func (m *moduleEnv) waitDegraded(t *testing.T, key client.ObjectKey, ok func(metav1.Condition) bool) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		obj := &v1beta1.MetalLB{}
		if err := m.client.Get(ctx, key, obj); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(obj.Status.Conditions, ConditionDegraded)
		if c == nil || c.ObservedGeneration != obj.Generation {
			return false, nil
		}
		got = *c
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("MetalLB %s: Degraded condition not as expected; last seen %+v: %v", key, got, err)
	}
	return got
}
