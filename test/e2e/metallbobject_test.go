package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// A user tunes MetalLB with kubectl: a good MetalLB object is applied and shown
// with its printer columns; a bad one is refused at once, naming the field.
func TestTuningWithKubectl(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, operatorNamespace, "metallb-system")
	startOperator(t, env, nil).waitReady(t)

	kubectl(t, env, "apply", "-f", "../../pkg/network/metallb/manifests/testdata/scenarios/log-level-debug.yaml")
	var table string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 30*time.Second, true, func(context.Context) (bool, error) {
		table = kubectl(t, env, "get", "metallb", "-n", "metallb-system")
		return strings.Contains(table, "False"), nil
	})
	if err != nil {
		t.Fatalf("the MetalLB object never showed Degraded False:\n%s", table)
	}
	t.Logf("kubectl get metallb -n metallb-system:\n%s", table)
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	if got := strings.Join(header, " "); got != "NAME AVAILABLE PROGRESSING DEGRADED VERSION AGE" {
		t.Errorf("printer columns are %q", got)
	}

	out, err := kubectlErr(env, "patch", "metallb", "metallb", "-n", "metallb-system", "--type=merge", "-p", `{"spec":{"logLevel":"loud"}}`)
	if err == nil || !strings.Contains(out, `spec.logLevel: Unsupported value: "loud"`) {
		t.Errorf("kubectl patch with a bad log level: %v\n%s", err, out)
	}
	t.Logf("kubectl patch with a bad log level:\n%s", out)
}

func kubectl(t *testing.T, env *testenv.Env, args ...string) string {
	t.Helper()
	return mustRun(t, "kubectl", args)(kubectlErr(env, args...))
}

func kubectlErr(env *testenv.Env, args ...string) (string, error) {
	return toolErr(env, "kubectl", nil, args...)
}

// toolErr runs one of the test binaries against the control plane, with
// environ added to the environment.
func toolErr(env *testenv.Env, name string, environ []string, args ...string) (string, error) {
	bin, err := testenv.Binary(name)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), environ...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustRun fails the test if the command it is given the result of failed.
func mustRun(t *testing.T, name string, args []string) func(string, error) string {
	return func(out string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
}
