package e2e

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The nodes hold the speakers to the capabilities their manifest grants: with
// NET_RAW taken out of the speaker's rendered DaemonSet (a test-only
// mutation, the operator stopped so that it does not put it back), the
// speakers run, ready, but answer no ARP, and the layer-2 story fails at its
// first probe, the failure naming the capability.
func TestSpeakerWithoutNetRawAnswersNothing(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, op := newConfiguredCluster(t)
	op.stop(t)
	// Every speaker replaced at once: the story is about what they can do, not the rollout.
	kubectl(t, c.Env, "-n", metallbNamespace, "patch", "daemonset", "speaker", "--type=json", "-p",
		`[{"op": "replace", "path": "/spec/template/spec/containers/0/securityContext/capabilities/add", "value": []},
		  {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/maxUnavailable", "value": "100%"}]`)
	c.waitPods(t, "speakers without NET_RAW", 3*time.Minute, func(p *corev1.Pod) bool {
		return p.Labels["component"] == "controller" || len(p.Spec.Containers[0].SecurityContext.Capabilities.Add) == 0
	})
	ip := c.exposeService(t)
	node, err := c.answer(t, ip, 10*time.Second)
	if err == nil {
		t.Fatalf("%s answered for %s with no speaker holding NET_RAW: the nodes do not apply capabilities", node, ip)
	}
	t.Logf("the layer-2 story's failure: %v", err)
	if strings.Count(err.Error(), "lacks NET_RAW") != len(c.Nodes) {
		t.Errorf("the failure does not name NET_RAW as lacking in each speaker: %v", err)
	}
	for _, pod := range c.speakerPods(t) {
		if log := c.Runner.ContainerLog(pod, "speaker"); !strings.Contains(log, "operation not permitted") {
			t.Errorf("%s's log does not show its ARP responder refused:\n%s", pod, log)
		}
	}
}

// On OpenShift, under OpenShift's own SCC admission, kube-controller-manager
// creating the pods as their service accounts: the real speakers, admitted
// under the SCC the module grants them (the speakers' own, from the
// manifests), hold exactly NET_RAW and answer ARP and NDP for a dual-stack
// Service; the controller, under restricted-v2, runs as a user of the
// namespace's range and hands out both addresses.
func TestSpeakersAnswerUnderTheirSCC(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t, func(o *testenv.Options) { o.SCCAdmission = true })
	kubectl(t, c.Env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_03_scc.yaml"))
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	c.configureDualStack(t)
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	c.assertAdmittedUnder(t, false)
	for pod := range maps.Values(c.speakerPods(t)) {
		if caps, ok := c.Runner.Capabilities(pod, "speaker"); !ok || !slices.Equal(caps, []string{"NET_RAW"}) {
			t.Errorf("%s holds capabilities %v, want NET_RAW alone", pod, caps)
		}
	}
	for _, ip := range c.expose(t, "web", corev1.IPv4Protocol, corev1.IPv6Protocol) {
		node, err := c.answer(t, ip, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s answered by %s", family(ip), ip, node)
	}
}
