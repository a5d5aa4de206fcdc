package binarybench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const (
	// OperatorNamespace is the default --operator-namespace: it holds the
	// leader Lease, and must exist before the operator starts.
	OperatorNamespace = "cluster-network-operator"
	// MetalLBNamespace is the default --namespace.
	MetalLBNamespace = manifests.DefaultNamespace
	// HealthAddr is the default --health-probe-bind-address.
	HealthAddr = ":8081"
	readyzURL  = "http://127.0.0.1:8081/readyz"
	// ReadyTimeout bounds the wait for the operator to become ready.
	ReadyTimeout = 2 * time.Minute
)

// The resources the benchmarks follow.
var (
	Deployments     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	DaemonSets      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	ServiceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	Namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	Leases          = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	CRDs            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	IPAddressPools  = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
)

// Bench is a control plane with, once StartOperator has run, the operator on it.
type Bench struct {
	Env      *testenv.Env
	Client   kubernetes.Interface
	Dynamic  dynamic.Interface
	Operator *Operator
	// OperatorFlags are added to the operator's command line (none: every
	// flag at its default).
	OperatorFlags []string
	// OperatorKubeconfig is the operator's (default: Env.Kubeconfig).
	OperatorKubeconfig string
	// OperatorEnviron is added to OperatorEnv, and wins over it: another
	// release, for an upgrade.
	OperatorEnviron []string
}

// Start is what every benchmark of the binary does first: it checks the
// binary and the ports its default flags bind besides HealthAddr (Preflight),
// makes the operator's log file (LogFile) and starts a control plane
// (StartControlPlane). stop stops what it started and removes a temporary
// log; it is to be called also when Start fails.
func Start(ctx context.Context, binary, keepLog string, opts testenv.Options, addrs ...string) (b *Bench, logFile string, stop func(), err error) {
	stop = func() {}
	if err := Preflight(binary, addrs...); err != nil {
		return nil, "", stop, err
	}
	logFile, removeLog, err := LogFile(keepLog)
	if err != nil {
		return nil, "", stop, err
	}
	b, err = StartControlPlane(ctx, opts)
	return b, logFile, func() { b.Stop(); removeLog() }, err
}

// StartControlPlane starts a control plane and creates the operator's
// namespace. Stop stops what it started, also when it fails.
func StartControlPlane(ctx context.Context, opts testenv.Options) (*Bench, error) {
	b := &Bench{}
	var err error
	start := time.Now()
	if b.Env, err = testenv.Start(ctx, opts); err != nil {
		return b, fmt.Errorf("starting the control plane: %v", err)
	}
	fmt.Printf("control plane up in %s at %s\n", time.Since(start).Round(time.Millisecond), b.Env.Config.Host)
	if b.Client, err = kubernetes.NewForConfig(b.Env.Config); err != nil {
		return b, err
	}
	if b.Dynamic, err = dynamic.NewForConfig(b.Env.Config); err != nil {
		return b, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}}
	_, err = b.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	return b, err
}

// StartOperator starts the binary with its default flags, its log in
// logFile, and waits until it is ready. addrs are the ports its defaults
// bind besides HealthAddr.
func (b *Bench) StartOperator(ctx context.Context, binary, logFile string, addrs ...string) error {
	if err := Preflight(binary, addrs...); err != nil {
		return err
	}
	var err error
	start := time.Now()
	kubeconfig := cmp.Or(b.OperatorKubeconfig, b.Env.Kubeconfig)
	if b.Operator, err = startOperator(binary, kubeconfig, logFile, b.OperatorFlags, b.OperatorEnviron); err != nil {
		return err
	}
	fmt.Printf("operator %s started, pid %d, log %s\n", binary, b.Operator.PID(), logFile)
	if err := b.waitReady(ctx); err != nil {
		return fmt.Errorf("the operator did not become ready: %v\n--- last lines of its log ---\n%s", err, b.Operator.Tail(20))
	}
	fmt.Printf("operator ready in %s: /readyz OK, Lease held, MetalLB's CRDs served\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// Preflight fails when the operator binary is missing or a port its default
// flags bind (HealthAddr and addrs) is taken: called first, it saves building
// a cluster for nothing. StartOperator checks the same again.
func Preflight(binary string, addrs ...string) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("the operator binary: %v (run `make build`)", err)
	}
	return portsFree(append([]string{HealthAddr}, addrs...))
}

// Stop stops the operator, then the control plane. It is safe to call more
// than once, and on a Bench that is only partly started.
func (b *Bench) Stop() {
	if b.Operator != nil {
		if err := b.Operator.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "operator: %v\n", err)
		}
	}
	if b.Env != nil {
		b.Env.Stop()
	}
}

// waitReady waits until /readyz answers OK, the operator holds its Lease,
// the IPAddressPool CRD is established and MetalLB's namespace exists: what
// a user needs before configuring MetalLB.
func (b *Bench) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	// The operator exiting ends every wait below at once.
	go func() {
		select {
		case <-b.Operator.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	err := b.waitReadyz(ctx)
	if err == nil {
		err = b.WaitFor(ctx, Leases, OperatorNamespace, operator.LeaseName, leaseHeld)
	}
	if err == nil {
		err = b.WaitFor(ctx, CRDs, "", "ipaddresspools.metallb.io", func(o *unstructured.Unstructured) bool { return ConditionTrue(o, "Established") })
	}
	if err == nil {
		err = b.WaitFor(ctx, Namespaces, "", MetalLBNamespace, func(*unstructured.Unstructured) bool { return true })
	}
	select {
	case <-b.Operator.Exited():
		return fmt.Errorf("the operator exited: %v", b.Operator.ExitError())
	default:
		return err
	}
}

// waitReadyz asks /readyz every 100 ms: an HTTP endpoint has no watch.
func (b *Bench) waitReadyz(ctx context.Context) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyzURL, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		resp.Body.Close()
		last = fmt.Errorf("GET %s: %s", readyzURL, resp.Status)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// WaitFor watches one object until cond holds for it.
func (b *Bench) WaitFor(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, cond func(*unstructured.Unstructured) bool) error {
	w, err := NewWatch(ctx, b.Dynamic.Resource(gvr).Namespace(namespace), ByName(name))
	if err != nil {
		return err
	}
	defer w.Stop()
	err = w.Until(ctx, func(o Objects) bool { return o[name] != nil && cond(o[name]) })
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
	return err
}

func leaseHeld(o *unstructured.Unstructured) bool {
	holder, _, _ := unstructured.NestedString(o.Object, "spec", "holderIdentity")
	return holder != ""
}

// ConditionTrue tells whether the object's status has the condition, True.
func ConditionTrue(o *unstructured.Unstructured, condition string) bool {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == condition && c["status"] == "True" {
			return true
		}
	}
	return false
}
