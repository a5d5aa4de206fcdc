package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Upgrade without loss: a new release of the operator replaces every speaker
// (and the controller) by rolling updates while a client asks for the
// Service's address every 100 ms; no gap is longer than 1 s, the memberlist
// key stays, and every new speaker joins the others. Midway, once the first
// speaker was replaced, the new operator is killed (SIGKILL, as the OOM
// killer does) and started again in the same pod: it leads again at once and
// reports the new version within 5 s of the last speaker being ready, not
// before.
func TestUpgradeWithoutLoss(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c, op, ip, _ := newServingCluster(t)
	c.createClusterOperator(t)
	key := c.memberlistKey(t)
	before := c.speakerPods(t)
	versionAt := c.watchClusterOperatorVersion(t, "4.22.1")

	w := c.watchAnswers(t, ip)
	started := time.Now()
	op.stop(t)
	upgrade := append(cluster.Release("4.22.1", release.MetalLB+"-1"), operator.PodNameEnv+"=cluster-network-operator-7c9d5-x2v4k")
	op = startOperator(t, c.Env, upgrade)
	op.waitReady(t)
	c.waitSpeakerReplaced(t, before)
	op.kill()
	op = startOperator(t, c.Env, upgrade)
	c.waitMetallb(t, release.MetalLB+"-1", 5*time.Minute)
	c.waitSpeakerRollout(t)
	rolledOut := time.Now()
	// A gap still open at the end of the rollout counts once it closes.
	c.waitAnswer(t, w, func(a answer) bool { return a.node != "" && a.at.After(rolledOut) }, 30*time.Second, "an answer for %s after the rollout", ip)
	w.end()

	gap, at := w.longestGap()
	t.Logf("UPGRADE: every speaker replaced in %s; %d probes; longest gap between answers %s, from %s after the new operator started",
		time.Since(started).Round(time.Second), len(w.answers), gap.Round(time.Millisecond), at.Sub(started).Round(time.Millisecond))
	if gap > time.Second {
		t.Errorf("the address went unanswered for %s during the upgrade; at most 1s is allowed", gap)
	}
	if got := c.memberlistKey(t); got != key {
		t.Error("the memberlist key changed during the upgrade")
	}
	c.assertControllerFirst(t, release.MetalLB+"-1")
	c.waitClusterOperatorVersion(t, "4.22.1")
	c.assertReportedAfterSpeakers(t, versionAt())
	late := versionAt().Sub(c.lastSpeakerReady(t))
	t.Logf("UPGRADE: the operator, killed and restarted midway, reported the version %s after the last speaker was ready", late.Round(time.Millisecond))
	if late > 5*time.Second {
		t.Errorf("the operator restarted midway reported the new version %s after the last speaker was ready; want within 5 s", late)
	}
	after := c.speakerPods(t)
	for node, pod := range after {
		if before[node] == pod {
			t.Errorf("the speaker on %s was not replaced", node)
		}
		log := c.Runner.ContainerLog(pod, "speaker")
		if !joinedOthers(log, node) {
			t.Errorf("the new speaker %s on %s did not join the other speakers' memberlist cluster; its log:\n%s", pod, node, log)
		}
	}
}

// joinedOthers tells whether the log of the speaker on node shows it in one
// memberlist cluster with others, and never failing to join some: it joined
// them, or they joined it first (another node's NodeJoin), after which its
// own discovery finds no one left to join and logs nothing.
func joinedOthers(log, node string) bool {
	joined := false
	for _, line := range strings.Split(log, "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		switch entry["msg"] {
		case "memberlist join successfully":
			n, _ := entry["number of other nodes"].(float64)
			joined = joined || int(n) >= 1
		case "node event - forcing sync":
			joined = joined || entry["node event"] == "NodeJoin" && entry["node name"] != node
		case "partial join":
			return false
		}
	}
	return joined
}

func (c *metallbCluster) memberlistKey(t *testing.T) string {
	t.Helper()
	s, err := c.Client.CoreV1().Secrets(metallbNamespace).Get(t.Context(), "memberlist", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["secretkey"])
}

// speakers are the speaker pods, as the API server lists them.
func (c *metallbCluster) speakers(t *testing.T) []corev1.Pod {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// speakerPods names the speaker pod of each node.
func (c *metallbCluster) speakerPods(t *testing.T) map[string]string {
	t.Helper()
	byNode := map[string]string{}
	for _, p := range c.speakers(t) {
		if p.DeletionTimestamp == nil {
			byNode[p.Spec.NodeName] = p.Name
		}
	}
	return byNode
}

// waitSpeakerReplaced waits until a speaker that was not there before
// runs: the rollout of the speakers has begun.
func (c *metallbCluster) waitSpeakerReplaced(t *testing.T, before map[string]string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		for node, pod := range c.speakerPods(t) {
			if before[node] != pod {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal("no speaker was replaced within 3 minutes")
	}
}

// lastSpeakerReady is when the last speaker became ready, to the second.
func (c *metallbCluster) lastSpeakerReady(t *testing.T) time.Time {
	t.Helper()
	var last time.Time
	for _, p := range c.speakers(t) {
		if ready := readySince(&p).Time; ready.After(last) {
			last = ready
		}
	}
	return last
}

func (c *metallbCluster) waitSpeakerRollout(t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ds, err := c.Client.AppsV1().DaemonSets(metallbNamespace).Get(ctx, "speaker", metav1.GetOptions{})
		return err == nil && daemonSetDone(ds), nil
	})
	if err != nil {
		t.Fatal("the speaker DaemonSet did not finish rolling out")
	}
}

// assertControllerFirst checks the order of the upgrade: no speaker was
// replaced before the new controller, which serves the webhooks, was ready by
// its own readiness endpoint. (Times are whole seconds on both sides, so the
// comparison cannot fail on a correct order.)
func (c *metallbCluster) assertControllerFirst(t *testing.T, tag string) {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=metallb"})
	if err != nil {
		t.Fatal(err)
	}
	var controllerReady metav1.Time
	for _, p := range pods.Items {
		if p.Labels["component"] == "controller" && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+tag) {
			if ready := readySince(&p); !ready.IsZero() {
				controllerReady = ready
			}
		}
	}
	if controllerReady.IsZero() {
		t.Fatalf("no ready controller of %s", tag)
	}
	for _, p := range pods.Items {
		if p.Labels["component"] == "speaker" && p.CreationTimestamp.Before(&controllerReady) {
			t.Errorf("speaker %s was replaced at %s, before the new controller was ready at %s", p.Name, p.CreationTimestamp, controllerReady)
		}
	}
}

func TestJoinedOthersReadsEitherSideOfTheJoin(t *testing.T) {
	const (
		self      = `{"msg":"node event - forcing sync","node event":"NodeJoin","node name":"kwok-1"}`
		joinedBy  = `{"msg":"node event - forcing sync","node event":"NodeJoin","node name":"kwok-0"}`
		joined    = `{"msg":"memberlist join successfully","number of other nodes":2}`
		alone     = `{"msg":"memberlist join successfully","number of other nodes":0}`
		partial   = `{"msg":"partial join","joined":1,"expected":2}`
		otherLeft = `{"msg":"node event - forcing sync","node event":"NodeLeave","node name":"kwok-0"}`
	)
	for _, tc := range []struct {
		lines []string
		want  bool
	}{
		{[]string{self, joined}, true},
		{[]string{self, joinedBy}, true},
		{[]string{self}, false},
		{[]string{self, alone, otherLeft}, false},
		{[]string{self, joinedBy, partial}, false},
	} {
		if got := joinedOthers(strings.Join(tc.lines, "\n"), "kwok-1"); got != tc.want {
			t.Errorf("joinedOthers(%q) = %v, want %v", tc.lines, got, tc.want)
		}
	}
}
