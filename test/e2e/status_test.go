package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// On a cluster with the ClusterOperator API, what an SRE reads: the
// ClusterOperator's columns and `kubectl describe` of the MetalLB object,
// after MetalLB rolled out on three kwok nodes. The outputs are logged; the
// status guide shows them.
func TestStatusReadsWell(t *testing.T) {
	env := testenv.New(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)})
	createNamespaces(t, env, operatorNamespace, "metallb-system")
	kubectl(t, env, "apply", "-f", "../../pkg/status/testdata/clusteroperators-crd.yaml")
	kubectl(t, env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	op := startOperator(t, env, []string{"RELEASE_VERSION=4.22.0"}, "--metallb-webhooks=false")
	op.waitReady(t)

	file := writeTemp(t, `apiVersion: metallb.io/v1beta1
kind: MetalLB
metadata:
  name: metallb
  namespace: metallb-system
spec:
  logLevel: debug
`)
	var co string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		if _, err := kubectlErr(env, "apply", "-f", file); err != nil {
			return false, nil // until the operator installed the CRD
		}
		co, _ = kubectlErr(env, "get", "clusteroperator", "metallb", "--no-headers")
		mlb, _ := kubectlErr(env, "get", "metallb", "-n", "metallb-system", "--no-headers")
		return strings.HasPrefix(strings.Join(strings.Fields(co), " "), "metallb 4.22.0 True False False") &&
			strings.HasPrefix(strings.Join(strings.Fields(mlb), " "), "metallb True False False 4.22.0"), nil
	})
	if err != nil {
		t.Fatalf("the ClusterOperator never showed 4.22.0 True False False:\n%s", co)
	}
	t.Logf("kubectl get clusteroperator metallb:\n%s", kubectl(t, env, "get", "clusteroperator", "metallb"))
	t.Logf("kubectl get metallb -n metallb-system:\n%s", kubectl(t, env, "get", "metallb", "-n", "metallb-system"))
	describe := kubectl(t, env, "describe", "metallb", "-n", "metallb-system", "metallb")
	t.Logf("kubectl describe metallb -n metallb-system metallb:\n%s", describe)
	assertMetrics(t, op, []string{
		`cluster_network_operator_operand_active{operand="metallb"} 1`,
		`cluster_network_operator_operand_condition{condition="Available",operand="metallb"} 1`,
		`cluster_network_operator_operand_condition{condition="Degraded",operand="metallb"} 0`,
		`cluster_network_operator_rollout_pods{operand="metallb",state="available",workload="speaker"} 3`,
		`cluster_network_operator_rollout_pods{operand="metallb",state="updated",workload="controller"} 1`,
	})
	for _, want := range []string{`Version:\s+4\.22\.0`, `Type:\s+Available`, `MetalLB's controller is available and a speaker runs on every node\.`,
		`Normal\s+AvailableTrue`, `Normal\s+ProgressingFalse`} {
		if !regexp.MustCompile(want).MatchString(describe) {
			t.Errorf("kubectl describe does not show %s", want)
		}
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return f.Name()
}

// assertMetrics checks that the operator's metrics endpoint shows each line.
func assertMetrics(t *testing.T, op *runningOperator, want []string) {
	t.Helper()
	resp, err := http.Get("http://" + op.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range want {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("metrics do not show %s", line)
		}
	}
}
