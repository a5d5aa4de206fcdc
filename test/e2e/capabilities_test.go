package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

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
