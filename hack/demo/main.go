// Command demo shows the operator at work on a local control plane that it
// starts itself (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok with three fake nodes): it takes its Lease, and deploys MetalLB when
// an IPAddressPool is created. It runs until Ctrl-C, then stops everything.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const (
	operatorNamespace = "cluster-network-operator"
	healthAddr        = "127.0.0.1:18081"
	metricsAddr       = "127.0.0.1:18080"
)

func main() {
	binary := flag.String("operator", "bin/cluster-network-operator", "the operator binary to run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *binary); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, binary string) error {
	step("starting a control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with 3 nodes")
	env, err := testenv.Start(ctx, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)})
	if err != nil {
		return err
	}
	defer func() {
		step("stopping the control plane")
		env.Stop()
	}()
	client := kubernetes.NewForConfigOrDie(env.Config)
	if err := showNodes(ctx, client); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}

	step("starting the operator: " + binary)
	op, err := startOperator(binary, env.Kubeconfig)
	if err != nil {
		return err
	}
	defer func() {
		step("stopping the operator (SIGTERM)")
		_ = op.Process.Signal(syscall.SIGTERM)
		_ = op.Wait()
	}()
	if err := showHealth(ctx); err != nil {
		return err
	}
	if err := showLease(ctx, client); err != nil {
		return err
	}
	if err := showActivation(ctx, env); err != nil {
		return err
	}

	kubectl, _ := testenv.Binary("kubectl")
	step("running; press Ctrl-C to stop. Look around with:")
	fmt.Printf("    export KUBECONFIG=%s\n    %s get nodes,ipaddresspools,daemonsets,pods -A\n", env.Kubeconfig, kubectl)
	<-ctx.Done()
	return nil
}

func startOperator(binary, kubeconfig string) (*exec.Cmd, error) {
	logFile := filepath.Join(os.TempDir(), "cno-demo-operator.log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "start", "--kubeconfig="+kubeconfig,
		"--operator-namespace="+operatorNamespace,
		"--health-probe-bind-address="+healthAddr, "--metrics-bind-address="+metricsAddr,
		// kwok's fake nodes run no MetalLB controller to serve the webhooks.
		"--metallb-webhooks=false",
		"--log-format=console")
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Ctrl-C reaches the demo, which stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Printf("    operator log: %s\n", logFile)
	return cmd, cmd.Start()
}

func showNodes(ctx context.Context, client kubernetes.Interface) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		fmt.Printf("    node %s %s Ready\n", n.Name, n.Status.Addresses[0].Address)
	}
	return nil
}

func showHealth(ctx context.Context) error {
	for _, path := range []string{"/healthz", "/readyz"} {
		var body string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			resp, err := http.Get("http://" + healthAddr + path)
			if err != nil {
				return false, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			return fmt.Errorf("operator %s not OK: %v", path, err)
		}
		fmt.Printf("    GET http://%s%s -> 200 %s\n", healthAddr, path, body)
	}
	return nil
}

func showLease(ctx context.Context, client kubernetes.Interface) error {
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease, err := client.CoordinationV1().Leases(operatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return false, nil
		}
		holder = *lease.Spec.HolderIdentity
		return holder != "", nil
	})
	if err != nil {
		return errors.New("the operator did not take its leader Lease")
	}
	fmt.Printf("    Lease %s/%s held by %s\n", operatorNamespace, operator.LeaseName, holder)
	return nil
}

// showActivation creates an IPAddressPool, as a user would, and shows MetalLB
// appearing: the CRDs were there first, then the controller and a speaker on
// every node.
func showActivation(ctx context.Context, env *testenv.Env) error {
	c, err := crclient.New(env.Config, crclient.Options{})
	if err != nil {
		return err
	}
	step("the operator installs MetalLB's CRDs; nothing runs until MetalLB is configured")
	pool := &unstructured.Unstructured{}
	pool.SetAPIVersion("metallb.io/v1beta1")
	pool.SetKind("IPAddressPool")
	pool.SetNamespace("metallb-system")
	pool.SetName("demo")
	_ = unstructured.SetNestedStringSlice(pool.Object, []string{"192.0.2.100-192.0.2.110"}, "spec", "addresses")
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, pool) == nil, nil // once the CRD is served
	})
	if err != nil {
		return fmt.Errorf("creating the IPAddressPool: %v", err)
	}
	step("created IPAddressPool metallb-system/demo (192.0.2.100-192.0.2.110): the operator deploys MetalLB")
	client := kubernetes.NewForConfigOrDie(env.Config)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ds, err := client.AppsV1().DaemonSets("metallb-system").Get(ctx, "speaker", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return ds.Status.NumberReady == 3, nil
	})
	if err != nil {
		return errors.New("MetalLB did not come up")
	}
	pods, err := client.CoreV1().Pods("metallb-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Printf("    pod %-28s on %-7s %s\n", p.Name, p.Spec.NodeName, p.Status.Phase)
	}
	return nil
}

func step(s string) { fmt.Printf("==> %s\n", s) }
