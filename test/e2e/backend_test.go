package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// waitFRRConfigured waits until frr-k8s runs, on every node, FRR configured
// with the session to the router that the speakers asked for: frr-k8s's
// FRRNodeStates show FRR's running configuration.
func (c *bgpCluster) waitFRRConfigured(t *testing.T) {
	t.Helper()
	want := "neighbor 192.0.2.3 remote-as 64501"
	var states string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		configured := slices.DeleteFunc(listed(ctx, dynamicClient(t, c.Env), frrNodeStates, "", func(o map[string]any) string {
			if strings.Contains(stringAt(o, "status", "runningConfig"), want) {
				return stringAt(o, "metadata", "name") // an FRRNodeState is named after its node
			}
			return ""
		}), func(node string) bool { return node == "" })
		states = strings.Join(configured, ", ")
		return slices.Equal(configured, c.nodeNames()), nil
	})
	if err != nil {
		t.Fatalf("FRR runs %q on nodes [%s] only, want every node", want, states)
	}
}

// BFD, which only the frr-k8s backend offers: with the user guide's
// BFDProfile on the BGPPeer, and BFD on the router, a node that dies loses its
// next hop within a second, where the hold timer (90 s here) would take
// minutes. It runs last (world.Last): BFD's 300 ms detection is about time,
// and under the full load the live nodes' sessions went down too (run 28:
// fewest next hops 0).
func TestFRRK8sBFD(t *testing.T) {
	if !world.Enter(t, world.Last) {
		return
	}
	c, _, ip := newBGPServingOn(t, newBGPCluster(t, true), "", "frr-k8s")
	c.applyOnceServed(t, guideExample(t, "bfd"))
	c.waitBFDUp(t, len(c.Nodes))
	dead, withdrawn, samples := c.killNode(t, ip, 30*time.Second)
	t.Logf("BFD NODE DIES (frr-k8s, BFD 100 ms x 3): the router dropped %s's next hop %s after the node died; %d samples, fewest next hops %d",
		dead, withdrawn.Round(10*time.Millisecond), len(samples), fewestNextHops(samples))
	if withdrawn > time.Second {
		t.Errorf("the next hop went %s after the node died; BFD (100 ms x 3) should take it within 1s", withdrawn)
	}
}

// waitBFDUp waits until the router has as many BFD sessions up.
func (c *bgpCluster) waitBFDUp(t *testing.T, want int) {
	t.Helper()
	var got int
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = c.router.BFDUp(ctx)
		return err == nil && got == want, nil
	})
	if err != nil {
		t.Fatalf("the router has %d BFD sessions up, want %d", got, want)
	}
}

// Switching a running cluster from native to frr-k8s and back, the router
// asked for its paths every 100 ms: the route to the address is always
// there, in either move, until frr-k8s's pods are gone; frr-k8s is ready on
// every node before the speakers change, and goes only after they have rolled
// back, a node at a time (maxUnavailable), so that back on native the router
// never misses more than one node's path: its FRR keeps the node's session
// (the user's FRRConfiguration names the router), refusing the speaker's,
// until it stops, and stopped everywhere at once the router lost every path
// (CI stop 55: 0 of 3 for 200 ms). The FRRConfiguration the user wrote stays. On each node the new
// backend's session comes up only once the old speaker is gone, and onto
// frr-k8s only once frr-k8s has loaded what the new speaker wrote: 12.5 s
// here alone, 25 s under the full load, where the unpaced speakers' rollout
// had moved on to the other nodes and the route was lost (runs 10, 11, 32,
// 35, 79); the speakers are paced for that move now. It runs last
// (world.Last).
func TestBGPBackendSwitch(t *testing.T) {
	if !world.Enter(t, world.Last) {
		return
	}
	c, _, ip := newBGPServing(t, "", "native")
	s := c.sampleNextHops(t, ip)

	order := c.watchWorkloads(t)
	c.applyOnceServed(t, guideExample(t, "frr-k8s"))
	c.waitFRRConfigured(t)
	c.waitNextHops(t, ip, c.nodeNames()...)
	order.assertBefore(t, order.rolledOut("DaemonSet/frr-k8s-daemon"), order.changed("DaemonSet/speaker"))
	c.applyOnceServed(t, guideExample(t, "frr-configuration"))

	order = c.watchWorkloads(t)
	back := time.Now()
	kubectl(t, c.Env, "patch", "metallb", "metallb", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"bgpBackend":"native"}}`)
	c.waitDaemonSetGone(t, "frr-k8s-daemon")
	c.waitPodsGone(t, "app=frr-k8s")
	c.waitSpeakerRollout(t)
	s.waitFor(t, 2*time.Minute, c.nodeNames())
	order.assertBefore(t, order.rolledOut("DaemonSet/speaker"), order.deleted("DaemonSet/frr-k8s-daemon"))
	samples := s.stop()

	kubectl(t, c.Env, "get", "-n", metallbNamespace, "frrconfiguration/accept-routes")
	kubectl(t, c.Env, "get", "crd", "frrconfigurations.frrk8s.metallb.io")
	i, _ := slices.BinarySearchFunc(samples, back, func(s nextHopSample, at time.Time) int { return s.at.Compare(at) })
	for _, phase := range []struct {
		name    string
		samples []nextHopSample
	}{{"native → frr-k8s", samples[:i]}, {"frr-k8s → native, until frr-k8s's pods are gone", samples[i:]}} {
		absent, who := longestAbsence(phase.samples, c.nodeNames())
		fewest := fewestNextHops(phase.samples)
		t.Logf("BGP BACKEND SWITCH (%s): %d samples; fewest next hops %d of %d; longest a node was missing: %s (%s)",
			phase.name, len(phase.samples), fewest, len(c.Nodes), absent.Round(10*time.Millisecond), who)
		if fewest == 0 {
			t.Errorf("the router lost its route to %s during the switch %s", ip, phase.name)
		}
	}
	if fewest := fewestNextHops(samples[i:]); fewest < len(c.Nodes)-1 {
		t.Errorf("back on native the router had %d of %d next hops at the least: frr-k8s left more than one node (maxUnavailable 1) at a time", fewest, len(c.Nodes))
	}
}

// waitDaemonSetGone waits until a DaemonSet of MetalLB's namespace is gone.
func (c *metallbCluster) waitDaemonSetGone(t *testing.T, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.AppsV1().DaemonSets(metallbNamespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("DaemonSet %s is still there", name)
	}
}

// waitPodsGone waits until no pod of MetalLB's namespace has the labels: their
// processes have stopped.
func (c *metallbCluster) waitPodsGone(t *testing.T, selector string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods %s are still there", selector)
	}
}
