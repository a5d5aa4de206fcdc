package e2e

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// On a cluster with the ClusterOperator API, what an SRE reads: the
// ClusterOperator's columns and `kubectl describe` of the MetalLB object,
// after MetalLB rolled out on three kwok nodes. The outputs are logged; the
// status guide shows them.
func TestStatusReadsWell(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)})
	createNamespaces(t, env, operatorNamespace, "metallb-system")
	kubectl(t, env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	kubectl(t, env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml")) // as the CVO does
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
	applyOnceServed(t, env, file) // once the operator installed the CRD
	var co string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 60*time.Second, true, func(context.Context) (bool, error) {
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
	// The Events are recorded in the background, soon after the status.
	assertDescribed(t, env, `Version:\s+4\.22\.0`, `Type:\s+Available`, `MetalLB's controller is available and a speaker runs on every node\.`,
		`Normal\s+AvailableTrue`, `Normal\s+ProgressingFalse`)
	assertMetricsGuarded(t, env, op)
	assertMetrics(t, env, op, []string{
		`cluster_network_operator_operand_active{operand="metallb"} 1`,
		`cluster_network_operator_operand_condition{condition="Available",operand="metallb"} 1`,
		`cluster_network_operator_operand_condition{condition="Degraded",operand="metallb"} 0`,
		`cluster_network_operator_rollout_pods{operand="metallb",state="available",workload="speaker"} 3`,
		`cluster_network_operator_rollout_pods{operand="metallb",state="updated",workload="controller"} 1`,
	})
}

// On a loopback address, with --metrics-secure not given, the metrics, Go's
// heap among them, are served over plain HTTP with no token, as a proxy beside
// the operator, or a measurement of it beside another operator on one
// machine, reads them; HTTPS is not served there.
func TestPlainMetricsOnLoopback(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, operatorNamespace)
	op := startOperatorAs(t, env.Kubeconfig, nil)
	op.waitReady(t)
	resp, err := http.Get("http://" + op.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "\ngo_memstats_heap_inuse_bytes ") {
		t.Fatalf("plain HTTP scrape got %d, want 200 with go_memstats_heap_inuse_bytes: %.300s", resp.StatusCode, body)
	}
	if _, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}). //nolint:gosec // a test's own loopback server
																			Get("https://" + op.metrics + "/metrics"); err == nil {
		t.Error("on loopback, with --metrics-secure not given, HTTPS is served too")
	}
}

// assertDescribed waits up to 10 s for `kubectl describe` of the MetalLB
// object to show each pattern, logs what it showed last, and fails on each
// pattern it did not show.
func assertDescribed(t *testing.T, env *testenv.Env, patterns ...string) {
	t.Helper()
	var describe string
	var missing []string
	_ = wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 10*time.Second, true, func(context.Context) (bool, error) {
		describe = kubectl(t, env, "describe", "metallb", "-n", "metallb-system", "metallb")
		missing = slices.DeleteFunc(slices.Clone(patterns), func(p string) bool { return regexp.MustCompile(p).MatchString(describe) })
		return len(missing) == 0, nil
	})
	t.Logf("kubectl describe metallb -n metallb-system metallb:\n%s", describe)
	for _, p := range missing {
		t.Errorf("kubectl describe does not show %s", p)
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

// assertMetrics checks that the operator's metrics endpoint shows each line to
// a token allowed to read it, as Prometheus would scrape it.
func assertMetrics(t *testing.T, env *testenv.Env, op *runningOperator, want []string) {
	t.Helper()
	code, body := op.scrape(t, metricsToken(t, env, "metrics-reader", true))
	if code != http.StatusOK {
		t.Fatalf("a scrape with a token allowed to get /metrics got %d: %.300s", code, body)
	}
	for _, line := range want {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics do not show %s", line)
		}
	}
}

// assertMetricsGuarded checks that the metrics endpoint answers a request
// without a token 401, and one with a token whose user may not get /metrics
// 403, and shows neither any metric.
func assertMetricsGuarded(t *testing.T, env *testenv.Env, op *runningOperator) {
	t.Helper()
	for _, tc := range []struct {
		what  string
		token string
		want  int
	}{
		{"without a token", "", http.StatusUnauthorized},
		{"with a token not allowed to get /metrics", metricsToken(t, env, "not-a-metrics-reader", false), http.StatusForbidden},
	} {
		code, body := op.scrape(t, tc.token)
		if code != tc.want || strings.Contains(body, "cluster_network_operator_") {
			t.Errorf("a scrape %s got %d, want %d: %.300s", tc.what, code, tc.want, body)
			continue
		}
		t.Logf("a scrape %s: %d %s", tc.what, code, strings.TrimSpace(body))
	}
}

// metricsToken returns a token of a new ServiceAccount in the operator's
// namespace; allowed binds it to the manifests' ClusterRole
// cluster-network-operator-metrics-reader, as a user binds Prometheus.
func metricsToken(t *testing.T, env *testenv.Env, name string, allowed bool) string {
	t.Helper()
	kubectl(t, env, "create", "serviceaccount", name, "-n", operatorNamespace)
	if allowed {
		kubectl(t, env, "apply", "-f", writeTemp(t, manifestObject(t, "0000_70_metallb_03_rbac.yaml", metricsReaderRole)))
		kubectl(t, env, "create", "clusterrolebinding", name, "--clusterrole="+metricsReaderRole, "--serviceaccount="+operatorNamespace+":"+name)
	}
	return strings.TrimSpace(kubectl(t, env, "create", "token", name, "-n", operatorNamespace))
}

const metricsReaderRole = "cluster-network-operator-metrics-reader"

// manifestObject returns the YAML document of a manifest file that names the object.
func manifestObject(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifestsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "\n  name: "+name+"\n") {
			return doc
		}
	}
	t.Fatalf("%s has no object named %s", file, name)
	return ""
}
