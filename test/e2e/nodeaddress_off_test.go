package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// switchedWithin bounds how soon turning the node-address mode on or off on
// the MetalLB object shows in a Service's addresses, with no restart.
const switchedWithin = 10 * time.Second

// The node-address mode costs nothing while it is off, and turns on and off
// without a restart. On three kwok nodes, with no MetalLB object (the mode is
// off on more than one node), the operator has, by the API server's audit
// log, swept the Services once for what an earlier operator wrote, and
// watches no Service and no EndpointSlice of the cluster; a Service of the
// mode's class stays pending. The MetalLB object enabling the mode gives it
// the three nodes' addresses within 10 s, through watches of Services and
// EndpointSlices; deleting it (the mode off again) takes them away within
// 10 s, with a NodeAddressOff Event, and those watches end.
func TestNodeAddressModeCostsNothingWhileOff(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{Audit: true, Kwok: true, Nodes: testenv.Nodes(3)})
	cs := kubernetes.NewForConfigOrDie(env.Config)
	kubectl(t, env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, env, "apply", "-k", manifestsDir)
	op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+serviceAccountKubeconfig(t, env), "--platform=BareMetal")
	op.waitReady(t)
	kubectl(t, env, "apply", "-f", guideExample(t, "node-address"))
	waitAudited(t, env, "the sweep of the Services", func(r request) bool { return clusterWide(r, "services", "list") })
	for _, r := range readAudit(t, env.AuditLog, operatorAccount) {
		if clusterWide(r, "services", "watch") || clusterWide(r, "endpointslices", "watch") || clusterWide(r, "endpointslices", "list") {
			t.Errorf("the mode is off, yet the operator made %s", r)
		}
	}
	if got := ingressOf(t, cs, "web-on-nodes"); len(got) > 0 {
		t.Errorf("the mode is off, yet the Service has the addresses %v", got)
	}

	applyOnceServed(t, env, guideExample(t, "node-address-mode"))
	waitIngressOf(t, cs, "web-on-nodes", switchedWithin, []string{"192.0.2.10", "192.0.2.11", "192.0.2.12"})
	watching := func(r request) bool {
		return r.Open && (clusterWide(r, "services", "watch") || clusterWide(r, "endpointslices", "watch"))
	}
	if n := countAudited(t, env, watching); n != 2 {
		t.Errorf("the mode is on, with %d open watches of the cluster's Services and EndpointSlices, want 2", n)
	}

	kubectl(t, env, "delete", "metallb", "metallb", "-n", "metallb-system")
	waitIngressOf(t, cs, "web-on-nodes", switchedWithin, nil)
	if events := kubectl(t, env, "get", "events", "-n", "default", "--field-selector=reason=NodeAddressOff", "-o", "name"); strings.TrimSpace(events) == "" {
		t.Error("the addresses went with no NodeAddressOff Event")
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, switchedWithin, true, func(context.Context) (bool, error) {
		return countAudited(t, env, watching) == 0, nil
	})
	if err != nil {
		t.Errorf("the mode is off, and %d of its watches are still open", countAudited(t, env, watching))
	}
}

// clusterWide tells whether a request is the verb on a resource of every
// namespace: the mode's, not the MetalLB module's, which reads its own
// namespace.
func clusterWide(r request, resource, verb string) bool {
	return r.Resource == resource && r.Verb == verb && r.Namespace == ""
}

func countAudited(t *testing.T, env *testenv.Env, match func(request) bool) int {
	t.Helper()
	n := 0
	for _, r := range readAudit(t, env.AuditLog, operatorAccount) {
		if match(r) {
			n++
		}
	}
	return n
}

// waitAudited waits until the operator's requests in the audit log include
// one that matches.
func waitAudited(t *testing.T, env *testenv.Env, what string, match func(request) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return countAudited(t, env, match) > 0, nil
	})
	if err != nil {
		t.Fatalf("the audit log shows no %s by the operator", what)
	}
}

func ingressOf(t *testing.T, cs kubernetes.Interface, name string) []string {
	t.Helper()
	svc, err := cs.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ingressIPs(svc)
}
