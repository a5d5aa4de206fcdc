package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

const (
	metallbNamespace = "metallb-system"
	poolFirst        = "192.0.2.100"
	poolLast         = "192.0.2.110"
	// The dual-stack pool's ranges (configureDualStack); IPv6 on the nodes'
	// 2001:db8::/64.
	dualFirst, dualLast   = "192.0.2.120", "192.0.2.125"
	dual6First, dual6Last = "2001:db8::100", "2001:db8::110"
)

// metallbCluster is the cluster the MetalLB stories run on (test/e2e/cluster).
type metallbCluster struct{ *cluster.Cluster }

// newMetallbCluster starts it; options may change the control plane's. It
// stops it when the test ends, with MetalLB's and the control plane's logs
// when the test failed. It skips the test, saying why, when not root: network
// namespaces need it.
func newMetallbCluster(t *testing.T, options ...func(*testenv.Options)) *metallbCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: the MetalLB end-to-end stories run the real speaker in network namespaces, which needs root (CI runs as root)")
	}
	testenv.StopOnInterrupt()
	start := time.Now()
	// Not t.Context(): it ends before the cleanups run, and with it the
	// containers whose processes a failed story lists.
	c, err := cluster.Start(context.WithoutCancel(t.Context()), cluster.Options{
		ControlPlane: func(o *testenv.Options) {
			for _, change := range options {
				change(o)
			}
		},
		Images: map[string]noderunner.Image{backendImage: {Files: map[string]string{"/backend": backendBinary}, Entrypoint: []string{"/backend"}}},
		Logf:   t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up in %s: kube-apiserver at %s", time.Since(start).Round(time.Millisecond), c.Env.Config.Host)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("MetalLB's logs:\n%s", c.Runner.LogTails(30))
			t.Logf("the processes of containers with more than one:\n%s", c.Runner.Processes())
			t.Logf("control plane logs:\n%s", c.Env.LogProblems(20))
		}
		c.Stop()
	})
	createNamespaces(t, c.Env, operatorNamespace)
	return &metallbCluster{c}
}

// newServingCluster is where the stories start: the operator of release
// 4.22.0 has deployed MetalLB after a pool and an advertisement were created,
// and a LoadBalancer Service has an address from the pool that a node answers
// for by ARP.
func newServingCluster(t *testing.T) (c *metallbCluster, op *runningOperator, ip net.IP, node string) {
	t.Helper()
	c, op = newConfiguredCluster(t)
	ip = c.exposeService(t)
	return c, op, ip, c.answerer(t, ip, 30*time.Second)
}

// newConfiguredCluster is newServingCluster before the Service: MetalLB
// deployed by the operator of release 4.22.0 for a pool and an advertisement.
func newConfiguredCluster(t *testing.T) (*metallbCluster, *runningOperator) {
	t.Helper()
	c := newMetallbCluster(t)
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	c.configure(t)
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	return c, op
}

// configure creates the pool and the layer-2 advertisement, as a user does.
func (c *metallbCluster) configure(t *testing.T) {
	t.Helper()
	c.applyOnceServed(t, writeTemp(t, fmt.Sprintf(`apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata:
  name: pool
  namespace: metallb-system
spec:
  addresses:
  - %s-%s
---
apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata:
  name: l2
  namespace: metallb-system
`, poolFirst, poolLast)))
}

// configureDualStack adds to what configure creates a pool with a range of
// each family, which the advertisement announces too: MetalLB gives a
// dual-stack Service both its addresses from one pool. (A pool of the
// stories that need it only: MetalLB's native BGP, which other stories
// advertise every pool with, refuses IPv6.)
func (c *metallbCluster) configureDualStack(t *testing.T) {
	t.Helper()
	c.configure(t)
	c.applyOnceServed(t, writeTemp(t, fmt.Sprintf(`apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata:
  name: dual-stack
  namespace: metallb-system
spec:
  addresses:
  - %s-%s
  - %s-%s
`, dualFirst, dualLast, dual6First, dual6Last)))
}

// applyOnceServed applies a file of MetalLB objects once the operator has
// installed MetalLB's CRDs.
func (c *metallbCluster) applyOnceServed(t *testing.T, file string) {
	t.Helper()
	applyOnceServed(t, c.Env, file)
}

// waitMetallb waits until the controller and a speaker on every node run the
// image tag, ready by their own readiness endpoints.
func (c *metallbCluster) waitMetallb(t *testing.T, tag string, timeout time.Duration) {
	t.Helper()
	c.waitPods(t, "MetalLB "+tag, timeout, func(p *corev1.Pod) bool {
		return strings.HasSuffix(p.Spec.Containers[0].Image, ":"+tag)
	})
}

// waitPods waits until the controller and a speaker on every node are ready
// and are what want says, and no other MetalLB pod is left.
func (c *metallbCluster) waitPods(t *testing.T, what string, timeout time.Duration, want func(*corev1.Pod) bool) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
		if err != nil {
			return false, nil
		}
		ready := map[string]int{}
		var states []string
		for _, p := range pods.Items {
			if status.PodReady(&p) && p.DeletionTimestamp == nil && want(&p) {
				ready[p.Labels["component"]]++
			}
			states = append(states, fmt.Sprintf("%s on %s %s ready=%v", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, status.PodReady(&p)))
		}
		last = strings.Join(states, "; ")
		return ready["controller"] == 1 && ready["speaker"] == len(c.Nodes) && len(pods.Items) == len(c.Nodes)+1, nil
	})
	if err != nil {
		t.Fatalf("%s did not become ready on every node within %s: %s", what, timeout, last)
	}
}

// exposeService creates a LoadBalancer Service with a ready endpoint (a pod
// that kwok runs) and returns the address MetalLB gives it.
func (c *metallbCluster) exposeService(t *testing.T) net.IP {
	t.Helper()
	return c.expose(t, "web")[0]
}

// expose creates a LoadBalancer Service of the families given (the cluster's
// default, IPv4, when none), both of them required when two, in front of the
// web pod, and returns the addresses MetalLB gives it.
func (c *metallbCluster) expose(t *testing.T, name string, families ...corev1.IPFamily) []net.IP {
	t.Helper()
	ctx := t.Context()
	c.createWebPod(t)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}, IPFamilies: families},
	}
	if len(families) == 2 {
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	}
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ips []net.IP
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := c.Client.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(s.Status.LoadBalancer.Ingress) < max(1, len(families)) {
			return false, nil
		}
		ips = nil
		for _, in := range s.Status.LoadBalancer.Ingress {
			ips = append(ips, net.ParseIP(in.IP))
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("Service %s got no address of each family %v from MetalLB within 60s", name, families)
	}
	return ips
}

// createWebPod creates, unless it exists, the pod on the first node (kwok
// runs it) that the stories' Services select (app: web).
func (c *metallbCluster) createWebPod(t *testing.T) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: c.Nodes[0].Name, Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// answerer waits until the address is answered (ARP, or NDP for IPv6) and returns the node
// whose MAC answers.
func (c *metallbCluster) answerer(t *testing.T, ip net.IP, timeout time.Duration) string {
	t.Helper()
	node, err := c.answer(t, ip, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// answer waits until the address is answered and names the node that
// answers; when none does it says so, with what the speakers may do as their
// nodes applied it: answering ARP and NDP takes raw sockets, NET_RAW.
func (c *metallbCluster) answer(t *testing.T, ip net.IP, timeout time.Duration) (string, error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		mac, err := c.Neighbors.Probe(ip, 200*time.Millisecond)
		if err != nil {
			return "", err
		}
		if mac != nil {
			return c.nodeOf(t, mac), nil
		}
	}
	return "", fmt.Errorf("nobody answered for %s within %s; answering takes NET_RAW: %s", ip, timeout, c.speakersRawSockets(t))
}

// speakersRawSockets says which speakers hold NET_RAW, read from their
// processes.
func (c *metallbCluster) speakersRawSockets(t *testing.T) string {
	var out []string
	for node, pod := range c.speakerPods(t) {
		caps, ok := c.Runner.Capabilities(pod, "speaker")
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s on %s is not running", pod, node))
		case slices.Contains(caps, "NET_RAW"):
			out = append(out, fmt.Sprintf("%s on %s holds NET_RAW", pod, node))
		default:
			out = append(out, fmt.Sprintf("%s on %s lacks NET_RAW (it holds %v)", pod, node, caps))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// nodeOf names the node with a MAC address.
func (c *metallbCluster) nodeOf(t *testing.T, mac net.HardwareAddr) string {
	t.Helper()
	node, ok := c.NodeOf(mac)
	if !ok {
		t.Fatalf("an answer from %s, which is no node's", mac)
	}
	return node
}

// readySince is when a pod became ready; zero when it is not.
func readySince(p *corev1.Pod) metav1.Time {
	if c := status.PodReadyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}

// daemonSetDone tells whether the speaker DaemonSet finished rolling out.
// waitDaemonSetsAvailable waits until every pod of MetalLB's DaemonSets is
// available, not only ready: frr-k8s's are 20 s (minReadySeconds) after.
// A story that changed the DaemonSets before that would see them replace
// every pod not yet available at once, as they do by design.
func (c *metallbCluster) waitDaemonSetsAvailable(t *testing.T) {
	t.Helper()
	var pending []string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.AppsV1().DaemonSets(metallbNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending = nil
		for _, ds := range list.Items {
			if !daemonSetDone(&ds) {
				pending = append(pending, fmt.Sprintf("%s (%d of %d available)", ds.Name, ds.Status.NumberAvailable, ds.Status.DesiredNumberScheduled))
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		t.Fatalf("MetalLB's DaemonSets are not all available: %s", strings.Join(pending, ", "))
	}
}

func daemonSetDone(ds *appsv1.DaemonSet) bool {
	return ds.Status.ObservedGeneration >= ds.Generation &&
		ds.Status.UpdatedNumberScheduled == ds.Status.DesiredNumberScheduled &&
		ds.Status.NumberAvailable == ds.Status.DesiredNumberScheduled
}

func inPool(ip net.IP) bool {
	v := ip.To4()
	first, last := net.ParseIP(poolFirst).To4(), net.ParseIP(poolLast).To4()
	return v != nil && string(v) >= string(first) && string(v) <= string(last)
}

// answerWatch probes an address every 100 ms, as a client that keeps talking to
// the Service would, and keeps who answered when.
type answerWatch struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	answers []answer
}

type answer struct {
	at   time.Time
	node string // "" when nobody answered
}

const probeEvery = 100 * time.Millisecond

func (c *metallbCluster) watchAnswers(t *testing.T, ip net.IP) *answerWatch {
	t.Helper()
	w := &answerWatch{stop: make(chan struct{}), done: make(chan struct{})}
	macs := map[string]string{}
	for _, n := range c.Nodes {
		macs[c.Net.Node(n.Name).MAC.String()] = n.Name
	}
	go func() {
		defer close(w.done)
		ticker := time.NewTicker(probeEvery)
		defer ticker.Stop()
		for {
			at := time.Now()
			mac, err := c.Neighbors.Probe(ip, probeEvery*9/10)
			a := answer{at: at}
			if err == nil && mac != nil {
				a.node = macs[mac.String()]
			}
			w.mu.Lock()
			w.answers = append(w.answers, a)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-ticker.C:
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

// end stops the probing; the answers can be read after it.
func (w *answerWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// longestGap is the longest time between two answered probes, and when it began.
func (w *answerWatch) longestGap() (gap time.Duration, from time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, a := range w.answers {
		if a.node == "" {
			continue
		}
		if !last.IsZero() && a.at.Sub(last) > gap {
			gap, from = a.at.Sub(last), last
		}
		last = a.at
	}
	return gap, from
}

// first returns the first answer the watch saw that matches.
func (w *answerWatch) first(matches func(answer) bool) (answer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.answers {
		if matches(a) {
			return a, true
		}
	}
	return answer{}, false
}
