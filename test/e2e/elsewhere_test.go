package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Beside the upstream metallb-operator, installed by OLM with its own MetalLB
// CRD and a MetalLB object using a field only that CRD has, the operator
// stands down: once it has settled (it writes nothing more, and it acts on
// events alone), the CRD and the object are as they were, it wrote neither
// (by the API server's audit log), and the ClusterOperator says
// ManagedElsewhere, which an Event tells once. Handed over as the message
// says, it takes MetalLB over, without a restart.
func TestStandsDownBesideAnotherMetalLBOperator(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{Audit: true})
	kubectl(t, env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, env, "create", "--field-manager=olm", "-f", "testdata/upstream-operator-crd.yaml")
	kubectl(t, env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io", "crd/metallbs.metallb.io")
	kubectl(t, env, "apply", "-k", manifestsDir)
	kubectl(t, env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml"))
	applyOnceServed(t, env, writeTemp(t, "apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata:\n  name: metallb\n  namespace: metallb-system\nspec:\n  bgpType: frr\n"))
	crdBefore := kubectl(t, env, "get", "crd", "metallbs.metallb.io", "-o", "jsonpath={.metadata.resourceVersion} {.metadata.managedFields}")
	objBefore := kubectl(t, env, "get", "metallb", "metallb", "-n", "metallb-system", "-o", "jsonpath={.metadata.resourceVersion}")

	op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+serviceAccountKubeconfig(t, env), "--platform=BareMetal")
	op.waitReady(t)
	waitClusterOperatorCondition(t, env, "Available", "True ManagedElsewhere")
	waitQuiet(t, env) // it acts on events alone (no resync): settled, it stays so
	select {
	case <-op.done:
		t.Fatalf("the operator exited; log:\n%s", op.log())
	default:
	}
	if got := kubectl(t, env, "get", "crd", "metallbs.metallb.io", "-o", "jsonpath={.metadata.resourceVersion} {.metadata.managedFields}"); got != crdBefore {
		t.Errorf("the other operator's CRD changed:\n was %s\n now %s", crdBefore, got)
	}
	if got := kubectl(t, env, "get", "metallb", "metallb", "-n", "metallb-system", "-o", "jsonpath={.metadata.resourceVersion} {.spec.bgpType}"); got != objBefore+" frr" {
		t.Errorf("the MetalLB object changed: %q, was %q with bgpType frr", got, objBefore)
	}
	for _, r := range readAudit(t, env.AuditLog, operatorAccount) {
		if slices.Contains([]string{"create", "update", "patch", "delete"}, r.Verb) && (r.Resource == "customresourcedefinitions" || strings.HasPrefix(r.Resource, "metallbs")) {
			t.Errorf("the operator wrote another operator's object: %s %s", r, r.Name)
		}
	}
	events := kubectl(t, env, "get", "events", "-A", "--field-selector=reason=ManagedElsewhere", "--no-headers")
	if n := len(strings.Split(strings.TrimSpace(events), "\n")); n != 1 || !strings.Contains(events, "kubectl annotate namespace metallb-system") {
		t.Errorf("want one ManagedElsewhere Event saying how to hand MetalLB over, got:\n%s", events)
	}

	// Handed over: the other operator is gone, the namespace annotated. The
	// MetalLB object it leaves is the MetalLB object now: MetalLB is deployed.
	kubectl(t, env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")
	waitClusterOperatorCondition(t, env, "Degraded", "False AsExpected")
	waitSpeaker(t, kubernetes.NewForConfigOrDie(env.Config), "")
	if got := kubectl(t, env, "get", "crd", "metallbs.metallb.io", "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"); got == "" {
		t.Error("the MetalLB CRD was not taken over")
	}
}

// waitClusterOperatorCondition waits until the ClusterOperator's condition
// of a type has the status and reason given ("True ManagedElsewhere"), and
// returns its message.
func waitClusterOperatorCondition(t *testing.T, env *testenv.Env, typ, want string) string {
	t.Helper()
	var got, message string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c := condition(clusterOperator(ctx, dynamicClient(t, env)), typ)
		got = fmt.Sprint(c["status"], " ", c["reason"])
		message, _ = c["message"].(string)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("the ClusterOperator's %s is %q, want %q", typ, got, want)
	}
	return message
}
