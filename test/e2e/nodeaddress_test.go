package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// reflectedWithin is the bound on how soon a change (a Service gone,
// a node's address changed) shows in the Services' addresses.
const reflectedWithin = 2 * time.Second

// The node-address mode with real traffic and no pool: kube-proxy (iptables)
// on every node, a backend pod behind node 1, the mode enabled on the MetalLB
// object. A Service of the mode's class gets every node's address and the
// client gets the backend's answer through one; a younger Service on the same
// port gets none, a Warning Event naming the older and the per-port error;
// deleting the older gives it the addresses within 2 s. A Local-policy
// Service publishes only node 1; a node's address changed on its Node shows
// within 2 s; dual-stack nodes give a dual-stack Service one entry per
// family. Then a pool hands the Service with no class to the real MetalLB
// controller, and the classed ones keep their node addresses.
func TestNodeAddressMode(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t)
	if err := c.Net.RoutePodsThroughNodes(); err != nil {
		t.Fatal(err)
	}
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	c.startKubeProxy(t)
	c.runBackend(t, "backend-0", c.Nodes[1].Name)
	kubectl(t, c.Env, "apply", "-f", guideExample(t, "node-address-mode"))
	ipv4 := c.nodeIPs()

	c.createService(t, "first", decide.Class)
	c.waitIngress(t, "first", time.Minute, ipv4)
	c.assertAnswer(t, net.JoinHostPort(ipv4[0], "80"), "backend-0", 30*time.Second)

	c.afterCreationSecondOf(t, "first")
	c.createService(t, "second", "")
	c.waitEvent(t, "second", "AddressTaken", "default/first")
	c.assertTaken(t, "second", 80)

	c.deleteService(t, "first")
	c.waitIngress(t, "second", reflectedWithin, ipv4)
	c.assertAnswer(t, net.JoinHostPort(ipv4[2], "80"), "backend-0", 30*time.Second)

	c.createService(t, "local", decide.Class, withPort(8081), localPolicy)
	c.waitIngress(t, "local", time.Minute, []string{c.Nodes[1].InternalIP})

	moved := "192.0.2.42"
	c.setNodeAddresses(t, c.Nodes[2].Name, moved)
	c.waitIngress(t, "second", reflectedWithin, []string{ipv4[0], ipv4[1], moved})
	c.setNodeAddresses(t, c.Nodes[2].Name, ipv4[2])

	ipv6 := c.dualStackNodes(t)
	c.createService(t, "dual", decide.Class, withPort(8082), dualStack)
	c.waitIngress(t, "dual", time.Minute, slices.Concat(ipv4, ipv6))

	c.configure(t)
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	c.waitIngressFrom(t, "second", 2*time.Minute, "an address from the pool and nothing else", func(ips []string) bool {
		return len(ips) == 1 && inPool(net.ParseIP(ips[0]))
	})
	c.assertIngress(t, "local", []string{c.Nodes[1].InternalIP})
	c.assertIngress(t, "dual", slices.Concat(ipv4, ipv6))
}

// afterCreationSecondOf waits, on the clock, until a Service created now is
// younger than the named one: creation times are in whole seconds, and at the
// same second the lesser UID, a random one, counts as the older.
func (c *metallbCluster) afterCreationSecondOf(t *testing.T, name string) {
	t.Helper()
	svc, err := c.Client.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-time.After(time.Until(svc.CreationTimestamp.Add(time.Second))):
	case <-t.Context().Done():
	}
}

// nodeIPs are the nodes' IPv4 addresses, in the order of their names.
func (c *metallbCluster) nodeIPs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.InternalIP)
	}
	return out
}

func withPort(port int32) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Ports[0].Port = port }
}

func localPolicy(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

func dualStack(s *corev1.Service) {
	s.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyRequireDualStack)
	s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
}

// dualStackNodes gives every node its IPv6 address on its Node too, as a
// dual-stack kubelet reports it, and returns those addresses.
func (c *metallbCluster) dualStackNodes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, n := range c.Nodes {
		ip6 := c.Net.Node(n.Name).IP6.String()
		c.setNodeAddresses(t, n.Name, n.InternalIP, ip6)
		out = append(out, ip6)
	}
	return out
}

// setNodeAddresses replaces a node's InternalIP addresses on its Node.
func (c *metallbCluster) setNodeAddresses(t *testing.T, node string, ips ...string) {
	t.Helper()
	addrs := []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: node}}
	for _, ip := range ips {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	list, err := json.Marshal(addrs)
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"status":{"addresses":%s}}`, list)
	_, err = c.Client.CoreV1().Nodes().Patch(t.Context(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
}

// waitIngress waits until the Service's addresses are exactly want, in order.
func (c *metallbCluster) waitIngress(t *testing.T, name string, timeout time.Duration, want []string) {
	t.Helper()
	waitIngressOf(t, c.Client, name, timeout, want)
}

// waitIngressOf waits until the default namespace's Service's addresses are
// exactly want, in order.
func waitIngressOf(t *testing.T, cs kubernetes.Interface, name string, timeout time.Duration, want []string) {
	t.Helper()
	waitIngressFrom(t, cs, name, timeout, strings.Join(want, ", "), func(ips []string) bool { return slices.Equal(ips, want) })
}

func (c *metallbCluster) waitIngressFrom(t *testing.T, name string, timeout time.Duration, what string, ok func([]string) bool) {
	t.Helper()
	waitIngressFrom(t, c.Client, name, timeout, what, ok)
}

// waitIngressFrom waits until the Service's addresses satisfy ok, and says
// how long it took.
func waitIngressFrom(t *testing.T, cs kubernetes.Interface, name string, timeout time.Duration, what string, ok func([]string) bool) {
	t.Helper()
	start := time.Now()
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		svc, err := cs.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = ingressIPs(svc)
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("Service %s: addresses %v after %s; want %s", name, got, timeout, what)
	}
	t.Logf("Service %s has %s after %s", name, what, time.Since(start).Round(time.Millisecond))
}

// assertIngress checks the Service's addresses now.
func (c *metallbCluster) assertIngress(t *testing.T, name string, want []string) {
	t.Helper()
	svc, err := c.Client.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ingressIPs(svc); !slices.Equal(got, want) {
		t.Errorf("Service %s: addresses %v, want %v", name, got, want)
	}
}

func ingressIPs(svc *corev1.Service) []string {
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out = append(out, in.IP)
		}
	}
	return out
}

// assertTaken checks that the Service has no address and that its status
// tells why, on the port.
func (c *metallbCluster) assertTaken(t *testing.T, name string, port int32) {
	t.Helper()
	svc, err := c.Client.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ingress := svc.Status.LoadBalancer.Ingress
	if len(ingress) != 1 || ingress[0].IP != "" || len(ingress[0].Ports) != 1 {
		t.Fatalf("Service %s: ingress %+v; want one entry with no address, for the taken port", name, ingress)
	}
	p := ingress[0].Ports[0]
	if p.Port != port || p.Error == nil || *p.Error != decide.PortTaken {
		t.Errorf("Service %s: port status %+v; want port %d with error %s", name, p, port, decide.PortTaken)
	}
}

// waitEvent waits for a Warning Event of the reason on the Service whose
// note names want.
func (c *metallbCluster) waitEvent(t *testing.T, name, reason, want string) {
	t.Helper()
	if notes, ok := c.waitEventOn(t, "Service", name, reason, corev1.EventTypeWarning, want); !ok {
		svc, _ := c.Client.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
		t.Fatalf("no Warning %s Event on Service %s naming %s; notes: %q; its status: %+v", reason, name, want, notes, svc.Status)
	}
}

// waitEventOn waits up to 30 s for an Event of the reason and type on an
// object in the namespace default, or cluster-scoped, whose note has want. It
// tells whether one came, with the notes of that reason on the object.
func (c *metallbCluster) waitEventOn(t *testing.T, kind, name, reason, eventType, want string) ([]string, bool) {
	t.Helper()
	var notes []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			return false, nil
		}
		notes = notes[:0]
		for _, e := range list.Items {
			if e.Regarding.Kind != kind || e.Regarding.Name != name {
				continue
			}
			notes = append(notes, e.Type+": "+e.Note)
			if e.Type == eventType && strings.Contains(e.Note, want) {
				return true, nil
			}
		}
		return false, nil
	})
	return notes, err == nil
}

// assertAnswer checks that the client gets the backend's answer at addr
// within timeout.
func (c *metallbCluster) assertAnswer(t *testing.T, addr, want string, timeout time.Duration) {
	t.Helper()
	var got string
	var err error
	waitErr := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		got, err = c.Net.Client.Get(addr, time.Second)
		return err == nil, nil
	})
	if waitErr != nil {
		t.Fatalf("no answer at %s within %s: %v\n%s", addr, timeout, err, c.Runner.LogTails(20))
	}
	if strings.TrimSpace(got) != want {
		t.Errorf("%s answered %q, want %q", addr, got, want)
	}
}

func (c *metallbCluster) deleteService(t *testing.T, name string) {
	t.Helper()
	if err := c.Client.CoreV1().Services("default").Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
