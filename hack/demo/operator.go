package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
)

// startOperator starts the operator of a release, with MetalLB's images of
// the tag.
func startOperator(binary, kubeconfig, version, tag string) (*exec.Cmd, error) {
	logFile := filepath.Join(os.TempDir(), "cno-demo-operator-"+version+".log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(binary, "start", "--kubeconfig="+kubeconfig,
		"--operator-namespace="+operatorNamespace,
		"--health-probe-bind-address="+healthAddr, "--metrics-bind-address="+metricsAddr,
		"--log-format=console")
	cmd.Env = append(os.Environ(), cluster.Release(version, tag)...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Ctrl-C reaches the demo, which stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Printf("    operator log: %s\n", logFile)
	return cmd, cmd.Start()
}

func stopOperator(op *exec.Cmd) {
	if op.ProcessState != nil {
		return
	}
	step("stopping the operator (SIGTERM)")
	_ = op.Process.Signal(syscall.SIGTERM)
	_ = op.Wait()
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

func (d *demo) showLease(ctx context.Context) error {
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease, err := d.Client.CoordinationV1().Leases(operatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
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
