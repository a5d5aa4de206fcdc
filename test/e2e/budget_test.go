package e2e

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
)

var budgetIdle = flag.Duration("budget-idle", 2*time.Minute,
	"how long TestAPIRequestBudgets counts the requests of a settled cluster")

// budgetServices is how many LoadBalancer Services the budget story has:
// half from a pool announced by layer 2, half from one announced by BGP.
const budgetServices = 50

// operatorUser is the user the budget story runs the operator as, so that
// the audit log tells its requests from the story's own.
const operatorUser = "cluster-network-operator"

// account is who asks the API server, and what it may ask: the budgets of
// TestAPIRequestBudgets, per account as OpenShift's conformance suite
// budgets each operator's requests, with their reasons beside them.
type account struct {
	name, user string
	// idleWritesPerMinute bounds the writes of a settled cluster.
	idleWritesPerMinute float64
	// activationPerService and upgradePerService bound every request (reads
	// and writes, watches counted once) of the activation and of an upgrade,
	// divided by the Services: what grows with a cluster's Services.
	activationPerService, upgradePerService float64
}

// accounts are the operator, MetalLB's controller and speakers, and
// frr-k8s's daemons (its status cleaner is the same service account). The
// budgets are 1.4 to 2 times the most measured (docs/benchmarks.md, "API
// request budgets"): room for a loaded machine's retries, none for a loop.
var accounts = []account{
	// The operator renews its leader Lease every 26 s (OpenShift's retry
	// period), 2.3 writes a minute, and writes nothing else while settled. It
	// renders and applies some 40 objects on activation and on an upgrade,
	// whatever the Services: 170-255 requests measured, 3.4-5.1 a Service.
	{name: "operator", user: operatorUser, idleWritesPerMinute: 3,
		activationPerService: 8, upgradePerService: 5},
	// MetalLB's controller writes each Service's status once it gives it an
	// address, again when it starts, and retries the writes refused for a
	// stale version: 4.8-6.7 a Service on activation, 3.2-4.3 on an upgrade.
	{name: "controller", user: "system:serviceaccount:metallb-system:controller", idleWritesPerMinute: 1,
		activationPerService: 10, upgradePerService: 8},
	// Each speaker writes a ServiceL2Status or ServiceBGPStatus for each
	// Service it announces, an Event for each (and patches its count), and
	// its ConfigurationState's status at each reload; a new speaker does it
	// all anew: 10.7-35.3 a Service on activation (the most when the speakers
	// were replaced during it), 25.5-27.3 on an upgrade of three speakers.
	// The loop of metallb#3063 would be some 5 refused writes a second per
	// Service, settled.
	{name: "speakers", user: "system:serviceaccount:metallb-system:speaker", idleWritesPerMinute: 1,
		activationPerService: 50, upgradePerService: 50},
	// frr-k8s writes each node's FRRNodeState and BGPSessionStates as
	// sessions change, and refreshes them: 0-0.9 writes a minute settled, 1.9-2.0
	// requests a Service on activation, 2.3-2.5 on an upgrade.
	{name: "frr-k8s", user: "system:serviceaccount:metallb-system:frr-k8s-daemon", idleWritesPerMinute: 3,
		activationPerService: 4, upgradePerService: 5},
}

// window is a part of the story the requests are counted in.
type window struct{ from, to time.Time }

func (w window) minutes() float64 { return w.to.Sub(w.from).Minutes() }

func (w window) length() time.Duration { return w.to.Sub(w.from).Round(time.Second) }

// tally is what an account asked in a window.
type tally struct {
	requests, writes, refusedWrites int
	byKind                          map[string]int // writes by verb and resource
}

func countIn(requests []request, w window) tally {
	n := tally{byKind: map[string]int{}}
	for _, r := range requests {
		if r.Received.Before(w.from) || r.Received.After(w.to) {
			continue
		}
		n.requests++
		if r.IsWrite() {
			n.writes++
			n.byKind[r.Verb+" "+r.GroupResource()]++
			if r.Code >= 400 {
				n.refusedWrites++
			}
		}
	}
	return n
}

// String says how many requests, writes and refused writes, and the most
// frequent writes.
func (n tally) String() string {
	kinds := slices.Collect(maps.Keys(n.byKind))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(n.byKind[b]-n.byKind[a], strings.Compare(a, b)) })
	var top []string
	for _, k := range kinds[:min(3, len(kinds))] {
		top = append(top, fmt.Sprintf("%d %s", n.byKind[k], k))
	}
	return fmt.Sprintf("%d requests, %d writes (%d refused; most: %s)", n.requests, n.writes, n.refusedWrites, strings.Join(top, ", "))
}

// An API request budget (issue 28): with 3 nodes and 50 LoadBalancer
// Services, half announced by layer 2 and half by BGP, the requests of the
// operator, MetalLB's controller and speakers and frr-k8s, read from the API
// server's audit log, stay within each account's budget during the
// activation, while settled (-budget-idle), and during an upgrade.
func TestAPIRequestBudgets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		var users []string
		for _, a := range accounts {
			users = append(users, a.user)
		}
		c := newBGPCluster(t, false, func(o *testenv.Options) { o.Audit, o.AuditUsers = true, users })
		kubeconfig, err := c.Env.UserKubeconfig(operatorUser)
		if err != nil {
			t.Fatal(err)
		}
		op := startOperatorAs(t, kubeconfig, cluster.Release("4.22.0", release.MetalLB))
		op.waitReady(t)
		activation := window{from: time.Now()}
		c.configureBudget(t, backend)
		c.waitAnnounced(t, backend)
		activation.to = time.Now()
		idle := window{from: c.waitQuiet(t, users)}
		select {
		case <-time.After(*budgetIdle):
		case <-t.Context().Done():
			t.Fatal("ended while idle")
		}
		idle.to = time.Now()
		upgrade := window{from: time.Now()}
		op.stop(t)
		op = startOperatorAs(t, kubeconfig, cluster.Release("4.22.1", release.MetalLB+"-1"))
		op.waitReady(t)
		c.waitMetallb(t, release.MetalLB+"-1", 5*time.Minute)
		c.waitAnnounced(t, backend)
		upgrade.to = time.Now()
		c.assertBudgets(t, backend, activation, idle, upgrade)
	})
}

// budgetPool is a pool (name, addresses) and its advertisement (kind), which
// announces it alone.
const budgetPool = `apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: %[1]s, namespace: metallb-system}
spec: {addresses: [%[2]s]}
---
apiVersion: metallb.io/v1beta1
kind: %[3]s
metadata: {name: %[1]s, namespace: metallb-system}
spec: {ipAddressPools: [%[1]s]}
`

// configureBudget has MetalLB deployed with the backend, a pool announced by
// layer 2 and one by BGP to the router, and the Services, half from each.
func (c *bgpCluster) configureBudget(t *testing.T, backend string) {
	t.Helper()
	if backend == "frr-k8s" {
		c.applyOnceServed(t, guideExample(t, "frr-k8s"))
	}
	// The router only listens: a node's FRR connects, and after a failed try
	// waits its connect time, 120 s unless set, which a replaced frr-k8s
	// daemon that met its predecessor's session would wait on a loaded machine
	// (native MetalLB refuses the field, and backs off from 1 s).
	connectTime := ""
	if backend == "frr-k8s" {
		connectTime = ", connectTime: 5s"
	}
	c.applyOnceServed(t, writeTemp(t, fmt.Sprintf(budgetPool, "budget-l2", "192.0.2.130-192.0.2.154", "L2Advertisement")+
		"---\n"+fmt.Sprintf(budgetPool, "budget-bgp", "192.0.2.160-192.0.2.184", "BGPAdvertisement")+`---
apiVersion: metallb.io/v1beta2
kind: BGPPeer
metadata: {name: router, namespace: metallb-system}
spec: {myASN: 64500, peerASN: 64501, peerAddress: 192.0.2.3`+connectTime+`}
`))
	c.createBudgetServices(t)
}

// createBudgetServices creates the Services in front of a pod kwok runs,
// the first half from the layer-2 pool, the rest from the BGP one.
func (c *bgpCluster) createBudgetServices(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	c.createWebPod(t)
	for i := range budgetServices {
		pool := "budget-l2"
		if i >= budgetServices/2 {
			pool = "budget-bgp"
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lb-%02d", i), Namespace: "default",
				Annotations: map[string]string{"metallb.io/address-pool": pool}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitAnnounced waits until every Service has an address, MetalLB's speakers
// run on every node, the router has a path through each node to every address
// of the BGP pool's Services, and with frr-k8s until it reports each node's
// session established: what it writes once sessions are up is the
// activation's, not the settled cluster's.
func (c *bgpCluster) waitAnnounced(t *testing.T, backend string) {
	t.Helper()
	c.waitMetallbRunning(t)
	if backend == "frr-k8s" {
		defer c.waitSessionStates(t)
	}
	var missing []string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		services, err := c.Client.CoreV1().Services("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		table, err := c.router.NextHops(ctx)
		if err != nil {
			return false, nil
		}
		missing = nil
		for _, s := range services.Items {
			if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
				missing = append(missing, c.unannounced(s, table)...)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		t.Fatalf("not announced within 3 minutes: %v", missing)
	}
}

// waitSessionStates waits until frr-k8s's BGPSessionStates say that each
// node's session is established.
func (c *bgpCluster) waitSessionStates(t *testing.T) {
	t.Helper()
	want := strings.Join(c.nodeNames(), "=Established ") + "=Established"
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		states := listed(ctx, dynamicClient(t, c.Env), bgpSessionStates, "", func(o map[string]any) string {
			return stringAt(o, "status", "node") + "=" + stringAt(o, "status", "bgpStatus")
		})
		got = strings.Join(slices.Compact(states), " ")
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("frr-k8s's BGPSessionStates say %q, want %q", got, want)
	}
}

// waitMetallbRunning waits for the MetalLB the operator runs, whichever its
// release, and with frr-k8s for the speakers to run with it.
func (c *bgpCluster) waitMetallbRunning(t *testing.T) {
	t.Helper()
	c.waitPods(t, "MetalLB", 3*time.Minute, func(*corev1.Pod) bool { return true })
	c.waitDaemonSetsAvailable(t)
}

// unannounced says what of a Service is not announced yet: its address, and
// for the BGP pool's the router's path through each node.
func (c *bgpCluster) unannounced(s corev1.Service, table map[string][]net.IP) []string {
	if len(s.Status.LoadBalancer.Ingress) == 0 {
		return []string{s.Name + ": no address"}
	}
	if s.Annotations["metallb.io/address-pool"] != "budget-bgp" {
		return nil
	}
	prefix := s.Status.LoadBalancer.Ingress[0].IP + "/32"
	var through []string
	for _, hop := range table[prefix] {
		through = append(through, c.nodeAt(hop))
	}
	slices.Sort(through)
	if !slices.Equal(slices.Compact(through), c.nodeNames()) {
		return []string{fmt.Sprintf("%s: %s through %v", s.Name, prefix, through)}
	}
	return nil
}

// waitQuiet waits until none of the users has written for 10 s, which is
// when the cluster has settled, and returns that time; a write loop never
// lets it settle.
func (c *bgpCluster) waitQuiet(t *testing.T, users []string) time.Time {
	t.Helper()
	const quiet = 10 * time.Second
	var last time.Time
	var lastWrite request
	err := wait.PollUntilContextTimeout(t.Context(), 2*time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
		for _, u := range users {
			requests, err := testenv.ReadAudit(c.Env.AuditLog, u)
			if err != nil {
				return false, err
			}
			for _, r := range requests {
				if r.IsWrite() && r.Received.After(last) {
					last, lastWrite = r.Received, r
				}
			}
		}
		return time.Since(last) >= quiet, nil
	})
	if err != nil {
		t.Fatalf("the cluster did not settle within 3 minutes (no write for %s): the last, at %s, was %s",
			quiet, last.Format(time.RFC3339Nano), lastWrite)
	}
	return time.Now()
}

// assertBudgets reads each account's requests and holds them to its budget.
func (c *bgpCluster) assertBudgets(t *testing.T, backend string, activation, idle, upgrade window) {
	t.Helper()
	for _, a := range accounts {
		if a.name == "frr-k8s" && backend != "frr-k8s" {
			continue
		}
		requests, err := testenv.ReadAudit(c.Env.AuditLog, a.user)
		if err != nil {
			t.Fatal(err)
		}
		act, still, up := countIn(requests, activation), countIn(requests, idle), countIn(requests, upgrade)
		perMinute := float64(still.writes) / idle.minutes()
		t.Logf("BUDGET (%s) %s: activation in %s: %.1f requests a Service, %s; settled for %s: %.1f writes a minute, %s; "+
			"upgrade in %s: %.1f requests a Service, %s", backend, a.name,
			activation.length(), perService(act), act, idle.length(), perMinute, still, upgrade.length(), perService(up), up)
		if perMinute > a.idleWritesPerMinute {
			t.Errorf("%s wrote %.1f times a minute while settled; its budget is %.0f", a.name, perMinute, a.idleWritesPerMinute)
		}
		if perService(act) > a.activationPerService {
			t.Errorf("%s made %.1f requests a Service in the activation; its budget is %.0f", a.name, perService(act), a.activationPerService)
		}
		if perService(up) > a.upgradePerService {
			t.Errorf("%s made %.1f requests a Service in the upgrade; its budget is %.0f", a.name, perService(up), a.upgradePerService)
		}
	}
}

func perService(n tally) float64 { return float64(n.requests) / budgetServices }
