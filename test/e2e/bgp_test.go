package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The ASNs of the BGP stories: the nodes' (the BGPPeer's myASN) and the
// router's, as the user guide's BGP example has them.
const (
	nodesASN  = 64500
	routerASN = 64501
)

// bgpCluster is a metallbCluster with a BGP router on its test network.
type bgpCluster struct {
	*metallbCluster
	router *noderunner.Router
}

// newBGPCluster starts the cluster and the router, with BFD if asked; it
// skips as newMetallbCluster does, which options are passed to.
func newBGPCluster(t *testing.T, bfd bool, options ...func(*testenv.Options)) *bgpCluster {
	t.Helper()
	c := &bgpCluster{metallbCluster: newMetallbCluster(t, options...)}
	var err error
	if c.router, err = c.Net.StartRouter(noderunner.RouterConfig{ASN: routerASN, PeerASN: nodesASN, BFD: bfd}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the router's log:\n%s", c.router.Log())
		}
		c.router.Close()
	})
	return c
}

// backends are MetalLB's BGP backends the operator deploys: each BGP story
// runs with both.
var backends = []string{"native", "frr-k8s"}

// forEachBackend runs a story once with each BGP backend, each in a world of
// its own, side by side (each takes a minute or more), but the backends named
// last, whose turn comes once the others have ended (world.Last).
func forEachBackend(t *testing.T, story func(t *testing.T, backend string), last ...string) {
	t.Parallel()
	for _, b := range backends {
		mode := world.Long
		if slices.Contains(last, b) {
			mode = world.Last
		}
		t.Run(b, func(t *testing.T) {
			if world.Enter(t, mode) {
				story(t, b)
			}
		})
	}
}

// newBGPServing is where the BGP stories start: the operator of release
// 4.22.0 has deployed MetalLB with the BGP backend for the user guide's BGP
// example (and, for frr-k8s, its example of that backend), its BGPPeer given
// holdTime (unless empty), and every node announces a LoadBalancer Service's
// address to the router.
func newBGPServing(t *testing.T, holdTime, backend string) (*bgpCluster, *runningOperator, net.IP) {
	t.Helper()
	return newBGPServingOn(t, newBGPCluster(t, false), holdTime, backend)
}

func newBGPServingOn(t *testing.T, c *bgpCluster, holdTime, backend string) (*bgpCluster, *runningOperator, net.IP) {
	t.Helper()
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	if backend == "frr-k8s" {
		c.applyOnceServed(t, guideExample(t, "frr-k8s"))
	}
	c.applyOnceServed(t, guideExample(t, "bgp"))
	if holdTime != "" {
		kubectl(t, c.Env, "patch", "bgppeer.v1beta2.metallb.io", "router", "-n", metallbNamespace, "--type=merge",
			"-p", `{"spec":{"holdTime":"`+holdTime+`"}}`)
	}
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	if backend == "frr-k8s" {
		c.waitFRRK8sSpeakers(t)
	}
	c.waitDaemonSetsAvailable(t)
	ip := c.exposeService(t)
	c.waitNextHops(t, ip, c.nodeNames()...)
	return c, op, ip
}

// Announce: every node announces the address of a Service with
// externalTrafficPolicy Cluster, and only the node with its ready endpoint
// once the policy is Local. MetalLB's ServiceBGPStatuses, which the user guide
// points to, say the same; frr-k8s's metrics and webhook take TLS 1.2 and 1.3,
// as the default profile, Intermediate, has them (frr-k8s alone takes only
// 1.3); with every session up, the alerts are silent on
// what the real binaries export; and the real Prometheus, scraping them as
// the ServiceMonitors say, fires the backend's session alert when the router
// stops and resolves it when the router is back.
func TestBGPAnnounce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		c, op, ip := newBGPServing(t, "", backend)
		if backend == "frr-k8s" {
			c.waitFRRConfigured(t)
			assertHandshakes(t, "Intermediate", c.frrK8sTLSEndpoints(t), true)
		}
		c.waitServiceBGPStatus(t, c.nodeNames()...)
		token := metricsToken(t, c.Env, "prometheus", true)
		c.assertAlertsSilent(t, op, backend, token)
		kubectl(t, c.Env, "patch", "service", "web", "-n", "default", "--type=merge", "-p", `{"spec":{"externalTrafficPolicy":"Local"}}`)
		c.waitNextHops(t, ip, c.Nodes[0].Name)
		c.waitServiceBGPStatus(t, c.Nodes[0].Name)
		c.assertSessionAlertFiresAndResolves(t, backend, token)
	})
}

// waitServiceBGPStatus waits until MetalLB's ServiceBGPStatuses say that the
// Service default/web is announced to the BGPPeer router from the nodes
// named, and from no other.
func (c *bgpCluster) waitServiceBGPStatus(t *testing.T, nodes ...string) {
	t.Helper()
	slices.Sort(nodes)
	var want []string
	for _, n := range nodes {
		want = append(want, n+" default/web [router]")
	}
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got = listed(ctx, dynamicClient(t, c.Env), serviceBGPStatuses, metallbNamespace, func(o map[string]any) string {
			peers, _, _ := unstructured.NestedStringSlice(o, "status", "peers")
			return fmt.Sprintf("%s %s/%s %v", stringAt(o, "status", "node"), stringAt(o, "status", "serviceNamespace"),
				stringAt(o, "status", "serviceName"), peers)
		})
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("MetalLB's ServiceBGPStatuses say %q, want %q", got, want)
	}
}

// waitNextHops waits until the router's paths to the address go through
// exactly the nodes named. Two minutes: on a loaded machine (four stories
// side by side) a frr-k8s reload of FRR took 27 s, twice in a row, before a
// node's session came up (run 75).
func (c *bgpCluster) waitNextHops(t *testing.T, ip net.IP, nodes ...string) {
	t.Helper()
	c.waitNextHopsWithin(t, 2*time.Minute, ip, nodes...)
}

func (c *bgpCluster) waitNextHopsWithin(t *testing.T, timeout time.Duration, ip net.IP, nodes ...string) {
	t.Helper()
	slices.Sort(nodes)
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = c.nextHops(ctx, ip)
		return err == nil && slices.Equal(got, nodes), err
	})
	if err != nil {
		t.Fatalf("the router's next hops to %s are %q, want %q: %v", ip, got, nodes, err)
	}
}

// nextHops names the nodes the router's paths to the address go through,
// sorted.
func (c *bgpCluster) nextHops(ctx context.Context, ip net.IP) ([]string, error) {
	table, err := c.router.NextHops(ctx)
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, hop := range table[ip.String()+"/32"] {
		nodes = append(nodes, c.nodeAt(hop))
	}
	slices.Sort(nodes)
	return slices.Compact(nodes), nil
}

// nodeAt names the node with an address, or returns the address.
func (c *bgpCluster) nodeAt(addr net.IP) string {
	for _, n := range c.Nodes {
		if n.InternalIP == addr.String() {
			return n.Name
		}
	}
	return addr.String()
}

func (c *bgpCluster) nodeNames() []string {
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	return names
}

// Upgrade: the operator's next release replaces every speaker (and with
// frr-k8s, every node's frr-k8s and FRR first) by the rolling updates while
// the router is asked for its paths every 100 ms: it always has a path to the
// address through every node but the one the rolling updates may take down at
// once (maxUnavailable 1).
//
// With frr-k8s the story runs last, beside the other stories about time: a
// new frr-k8s pod counts as available 20 s (minReadySeconds) after it is
// ready, on the bet that its BGP session is back by then, and the busier the
// machine the longer that takes (10-15 s measured on an idle one). It once
// failed (fewest next hops 1 of 3) for another cause: the upgrade began
// before the first frr-k8s pods were available, and the DaemonSet replaced
// them all at once; it now starts once the operator reports the rollout over.
func TestBGPUpgrade(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		c, op, ip := newBGPServing(t, "", backend)
		order := c.watchWorkloads(t)
		s := c.sampleNextHops(t, ip)
		op.stop(t)
		op = startOperator(t, c.Env, cluster.Release("4.22.1", release.MetalLB+"-1"))
		op.waitReady(t)
		c.waitMetallb(t, release.MetalLB+"-1", 5*time.Minute)
		c.waitSpeakerRollout(t)
		c.waitNextHops(t, ip, c.nodeNames()...)
		samples := s.stop()

		absent, who := longestAbsence(samples, c.nodeNames())
		fewest := fewestNextHops(samples)
		t.Logf("BGP UPGRADE (%s): %d samples; fewest next hops %d of %d; longest a node was missing: %s (%s)",
			backend, len(samples), fewest, len(c.Nodes), absent.Round(10*time.Millisecond), who)
		if fewest < len(c.Nodes)-1 {
			t.Errorf("the router was down to %d next hops to %s during the upgrade; maxUnavailable 1 allows one node fewer than %d", fewest, ip, len(c.Nodes))
		}
		if backend == "frr-k8s" {
			// CRDs aside, the controller first, then frr-k8s ready on every node,
			// then the speakers.
			order.assertBefore(t, order.changed("Deployment/controller"), order.changed("DaemonSet/frr-k8s-daemon"))
			order.assertBefore(t, order.rolledOut("DaemonSet/frr-k8s-daemon"), order.changed("DaemonSet/speaker"))
		}
	}, "frr-k8s")
}

// Deactivate: with the pool and the advertisement deleted the route is
// withdrawn, and MetalLB stays for the BGPPeer the user kept; with the
// BGPPeer (and the MetalLB object) deleted too, MetalLB's and frr-k8s's
// workloads go, the sessions with them, and the CRDs, the memberlist Secret
// and the FRRConfiguration the user wrote stay.
func TestBGPDeactivate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		c, _, ip := newBGPServing(t, "", backend)
		if backend == "frr-k8s" {
			c.applyOnceServed(t, guideExample(t, "frr-configuration"))
		}
		kubectl(t, c.Env, "delete", "-n", metallbNamespace, "ipaddresspool/datacenter", "bgpadvertisement/datacenter")
		c.waitNextHops(t, ip)
		kubectl(t, c.Env, "get", "-n", metallbNamespace, "daemonset/speaker", "bgppeer.v1beta2.metallb.io/router")

		kubectl(t, c.Env, "delete", "-n", metallbNamespace, "bgppeer.v1beta2.metallb.io/router", "metallb/metallb", "--ignore-not-found")
		c.waitWorkloadsGone(t)
		c.waitSessions(t, 0)
		kubectl(t, c.Env, "get", "crd", "bgppeers.metallb.io", "ipaddresspools.metallb.io")
		kubectl(t, c.Env, "get", "-n", metallbNamespace, "secret/memberlist")
		if backend == "frr-k8s" {
			kubectl(t, c.Env, "get", "crd", "frrconfigurations.frrk8s.metallb.io", "frrnodestates.frrk8s.metallb.io")
			kubectl(t, c.Env, "get", "-n", metallbNamespace, "frrconfiguration/accept-routes")
		}
	})
}

// waitSessions waits until the router has as many established sessions.
func (c *bgpCluster) waitSessions(t *testing.T, want int) {
	t.Helper()
	var got int
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = c.router.Established(ctx)
		return err == nil && got == want, err
	})
	if err != nil {
		t.Fatalf("the router has %d BGP sessions established, want %d: %v", got, want, err)
	}
}

// What users get wrong with BGP is told where they look, an Event on the
// object and a line in the MetalLB object's status, and never makes the
// operator Degraded: an advertisement naming a pool that does not exist, a
// BGPPeer with hold time 0s, a BGPPeer whose password Secret is missing (as
// MetalLB itself reports it, in its ConfigurationStates), and a pool that
// only BGP would announce, with no BGPPeer left.
func TestBGPMistakesAreTold(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, _, _ := newBGPServing(t, "", "native")
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, "apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata:\n  name: metallb\n  namespace: metallb-system\n"))
	c.applyOnceServed(t, writeTemp(t, `apiVersion: metallb.io/v1beta1
kind: BGPAdvertisement
metadata:
  name: typo
  namespace: metallb-system
spec:
  ipAddressPools:
  - datacentre
---
`+securedPeerYAML("192.0.2.4", "missing", "  holdTime: 0s")))
	told := map[string]string{
		"SelectsNoPool":        "BGPAdvertisement metallb-system/typo selects no IPAddressPool",
		"HoldTimeZero":         "BGPPeer metallb-system/secured has holdTime 0s",
		"ConfigurationInvalid": "secret ref not found for peer config \"metallb-system\"/\"secured\"",
	}
	for reason, want := range told {
		if note := strings.Join(waitEventNotes(t, c.Env, reason), "\n"); !strings.Contains(note, want) {
			t.Errorf("the %s Event says %q, not %q", reason, note, want)
		}
	}
	c.waitMetalLBMessage(t, "Degraded", "False", slices.Collect(maps.Values(told))...)

	kubectl(t, c.Env, "delete", "-n", metallbNamespace, "bgppeer.v1beta2.metallb.io/router", "bgppeer.v1beta2.metallb.io/secured")
	want := "IPAddressPool metallb-system/datacenter is announced only by BGP (BGPAdvertisement datacenter), and no BGPPeer exists"
	if note := strings.Join(waitEventNotes(t, c.Env, "NoBGPPeer"), "\n"); !strings.Contains(note, want) {
		t.Errorf("the NoBGPPeer Event says %q, not %q", note, want)
	}
	c.waitMetalLBMessage(t, "Degraded", "False", want)
}

// waitMetalLBMessage waits until the MetalLB object's condition of a type has
// the status and a message that says each of want.
func (c *metallbCluster) waitMetalLBMessage(t *testing.T, typ, status string, want ...string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		mlb, _ := dynamicClient(t, c.Env).Resource(metallbs).Namespace(metallbNamespace).Get(ctx, "metallb", metav1.GetOptions{})
		cond := condition(mlb, typ)
		got = fmt.Sprint(cond["status"], " ", cond["message"])
		if !strings.HasPrefix(got, status+" ") {
			return false, nil
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the MetalLB object's %s is %q, want %s with %q", typ, got, status, want)
	}
}
