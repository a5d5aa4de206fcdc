package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

const (
	operatorNamespace = "cluster-network-operator"
	metallbNamespace  = "metallb-system"
	healthAddr        = "127.0.0.1:18081"
	metricsAddr       = "127.0.0.1:18080"
)

func main() {
	noderunner.Main() // when this run is a MetalLB container, it becomes it
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "demo: needs root: MetalLB's speakers run in network namespaces, one per node")
		os.Exit(1)
	}
	if code, done := noderunner.Isolate(); done {
		os.Exit(code) // the demo ran in a network namespace of its own
	}
	binary := flag.String("operator", "bin/cluster-network-operator", "the operator binary to run")
	keep := flag.Bool("wait", false, "keep everything running at the end, until Ctrl-C")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *binary, *keep)
	switch {
	case ctx.Err() != nil:
		step("interrupted; everything is stopped")
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is what the story runs on: the end-to-end stories' cluster.
type demo struct {
	*cluster.Cluster
	// live is set while a progress line is being rewritten in place.
	live atomic.Bool
}

func run(ctx context.Context, binary string, keep bool) error {
	d := &demo{}
	if err := d.start(ctx); err != nil {
		return err
	}
	defer d.Stop()
	ip, err := d.handInstall(ctx)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(binary)
	step("starting the operator, release 4.22.0 (MetalLB images quay.io/metallb/*:" + release.MetalLB + "): " + abs)
	op, err := startOperator(abs, d.Env.Kubeconfig, "4.22.0", release.MetalLB)
	if err != nil {
		return err
	}
	defer func() { stopOperator(op) }()
	if err := showHealth(ctx); err != nil {
		return err
	}
	if err := d.showLease(ctx); err != nil {
		return err
	}
	if err := d.takeOver(ctx, ip); err != nil {
		return err
	}

	step("upgrade: the operator of release 4.22.1 (images :" + release.MetalLB + "-1) replaces the one of 4.22.0")
	stopOperator(op)
	if op, err = startOperator(abs, d.Env.Kubeconfig, "4.22.1", release.MetalLB+"-1"); err != nil {
		return err
	}
	if err := d.followUpgrade(ctx, ip, release.MetalLB+"-1"); err != nil {
		return err
	}
	if err := d.showPods(ctx); err != nil {
		return err
	}
	if keep {
		kubectl, _ := testenv.Binary("kubectl")
		step("running; press Ctrl-C to stop. From this demo's network namespace (nsenter -t " + fmt.Sprint(os.Getpid()) + " -n):")
		fmt.Printf("    export KUBECONFIG=%s\n    %s get nodes,ipaddresspools,services,pods -A\n", d.Env.Kubeconfig, kubectl)
		<-ctx.Done()
	}
	return nil
}

// previousManifest is upstream's native manifest of the previous release, as
// `make update-bindata` copies it.
const previousManifest = "test/e2e/testdata/metallb-native-" + release.PreviousMetalLB + ".yaml"

// handInstall installs MetalLB of the previous release as upstream's docs
// say, configures it and exposes a Service, which it answers for.
func (d *demo) handInstall(ctx context.Context) (net.IP, error) {
	step("MetalLB " + release.PreviousMetalLB + " installed by hand, no operator: kubectl apply -f " + previousManifest)
	if err := d.kubectlApply(ctx, "-f", previousManifest); err != nil {
		return nil, err
	}
	step("a pool and a layer-2 advertisement: kubectl apply -f -")
	fmt.Print(indent(config))
	if err := d.kubectlApply(ctx, "-f", "-"); err != nil {
		return nil, err
	}
	if err := d.waitMetallb(ctx, release.PreviousMetalLB); err != nil {
		return nil, err
	}
	ip, err := d.expose(ctx)
	if err != nil {
		return nil, err
	}
	return ip, d.showAnswers(ctx, ip)
}

// takeOver shows the operator leaving the hand install alone, then taking it
// over and upgrading it once the namespace is annotated.
func (d *demo) takeOver(ctx context.Context, ip net.IP) error {
	if err := d.showForeign(ctx); err != nil {
		return err
	}
	step("takeover: kubectl annotate namespace " + metallbNamespace + " " + metallb.AdoptAnnotation + "=true")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, metallb.AdoptAnnotation)
	if _, err := d.Client.CoreV1().Namespaces().Patch(ctx, metallbNamespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	step("the operator takes every object over and upgrades MetalLB: CRDs, the controller, then one speaker at a time")
	if err := d.followUpgrade(ctx, ip, release.MetalLB); err != nil {
		return err
	}
	return d.showPods(ctx)
}

// showForeign waits for the operator's Event saying that another
// installation runs MetalLB, and shows it.
func (d *demo) showForeign(ctx context.Context) error {
	var note string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		events, err := d.Client.EventsV1().Events(metallbNamespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + metallb.ReasonForeignObjects})
		if err != nil || len(events.Items) == 0 {
			return false, nil
		}
		note = events.Items[0].Note
		return true, nil
	})
	if err != nil {
		return errors.New("the operator said nothing of the hand install within a minute")
	}
	step("the operator sees another installation and changes nothing; its Event ForeignObjects says:")
	fmt.Print(indent(note + "\n"))
	return nil
}

// start starts the cluster (test/e2e/cluster) and creates the operator's
// namespace; on error it stops the cluster. Stop stops it, showing each part
// go.
func (d *demo) start(ctx context.Context) error {
	c, err := cluster.Start(ctx, cluster.Options{Logf: d.runnerLog, Progress: step})
	if err != nil {
		return err
	}
	d.Cluster = c
	for _, n := range d.Nodes {
		fmt.Printf("    node %s %s Ready (kwok; MetalLB's pods on it run for real)\n", n.Name, n.InternalIP)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if _, err := d.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		d.Stop()
		return err
	}
	return nil
}

// runnerLog shows what the node runner does, below a live progress line.
func (d *demo) runnerLog(format string, args ...any) {
	if d.live.Load() {
		fmt.Println()
	}
	fmt.Printf("    node runner: "+format+"\n", args...)
}

// startOperator starts the operator of a release, with MetalLB's images of
// the tag.
func startOperator(binary, kubeconfig, version, tag string) (*exec.Cmd, error) {
	logFile := filepath.Join(os.TempDir(), "cno-demo-operator-"+version+".log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(binary, "start", "--kubeconfig="+kubeconfig,
		"--operator-namespace="+operatorNamespace,
		"--health-probe-bind-address="+healthAddr, "--metrics-bind-address="+metricsAddr,
		"--log-format=console")
	cmd.Env = append(os.Environ(), cluster.Release(version, tag)...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Ctrl-C reaches the demo, which stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Printf("    operator log: %s\n", logFile)
	return cmd, cmd.Start()
}

func stopOperator(op *exec.Cmd) {
	if op.ProcessState != nil {
		return
	}
	step("stopping the operator (SIGTERM)")
	_ = op.Process.Signal(syscall.SIGTERM)
	_ = op.Wait()
}

func showHealth(ctx context.Context) error {
	for _, path := range []string{"/healthz", "/readyz"} {
		var body string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			resp, err := http.Get("http://" + healthAddr + path)
			if err != nil {
				return false, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			return fmt.Errorf("operator %s not OK: %v", path, err)
		}
		fmt.Printf("    GET http://%s%s -> 200 %s\n", healthAddr, path, body)
	}
	return nil
}

func (d *demo) showLease(ctx context.Context) error {
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease, err := d.Client.CoordinationV1().Leases(operatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return false, nil
		}
		holder = *lease.Spec.HolderIdentity
		return holder != "", nil
	})
	if err != nil {
		return errors.New("the operator did not take its leader Lease")
	}
	fmt.Printf("    Lease %s/%s held by %s\n", operatorNamespace, operator.LeaseName, holder)
	return nil
}

const config = `apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata:
  name: demo
  namespace: metallb-system
spec:
  addresses:
  - 192.0.2.100-192.0.2.110
---
apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata:
  name: demo
  namespace: metallb-system
`

// kubectlApply runs kubectl apply with the args, "-" reading the pool and
// advertisement, until it succeeds: MetalLB's CRDs and webhook take a moment
// to be served.
func (d *demo) kubectlApply(ctx context.Context, args ...string) error {
	kubectl, err := testenv.Binary("kubectl")
	if err != nil {
		return err
	}
	var out []byte
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", d.Env.Kubeconfig, "apply"}, args...)...)
		cmd.Stdin = strings.NewReader(config)
		out, err = cmd.CombinedOutput()
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("kubectl apply: %s", out)
	}
	if args[len(args)-1] == "-" {
		fmt.Print(indent(string(out)))
	}
	return nil
}

// waitMetallb waits until the controller and every speaker of the tag are ready.
func (d *demo) waitMetallb(ctx context.Context, tag string) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		ready, _, err := d.readyPods(ctx, tag)
		return err == nil && ready["controller"] == 1 && ready["speaker"] == len(d.Nodes), nil
	})
	if err != nil {
		return errors.New("MetalLB did not become ready within 3 minutes")
	}
	return d.showPods(ctx)
}

// readyPods counts the ready MetalLB pods of the tag by component, and all pods.
func (d *demo) readyPods(ctx context.Context, tag string) (map[string]int, int, error) {
	pods, err := d.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
	if err != nil {
		return nil, 0, err
	}
	ready := map[string]int{}
	for _, p := range pods.Items {
		if podReady(&p) && p.DeletionTimestamp == nil && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+tag) {
			ready[p.Labels["component"]]++
		}
	}
	return ready, len(pods.Items), nil
}

func (d *demo) showPods(ctx context.Context) error {
	pods, err := d.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Printf("    pod %-28s on %-7s %-38s ready=%v\n", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, podReady(&p))
	}
	return nil
}

// expose creates a LoadBalancer Service with a ready endpoint and waits for
// its address.
func (d *demo) expose(ctx context.Context) (net.IP, error) {
	step("a LoadBalancer Service default/web, with one ready endpoint (a pod kwok runs on " + d.Nodes[0].Name + ")")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: d.Nodes[0].Name, Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1"}}},
	}
	if _, err := d.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := d.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var ip net.IP
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := d.Client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(s.Status.LoadBalancer.Ingress) == 0 {
			return false, nil
		}
		ip = net.ParseIP(s.Status.LoadBalancer.Ingress[0].IP)
		return true, nil
	})
	if err != nil {
		return nil, errors.New("the Service got no address within a minute")
	}
	fmt.Printf("    status.loadBalancer.ingress: %s (handed out by MetalLB's controller)\n", ip)
	return ip, nil
}

// showAnswers asks who has the address, from the client, until answered.
func (d *demo) showAnswers(ctx context.Context, ip net.IP) error {
	step(fmt.Sprintf("the client %s asks by ARP who has %s", noderunner.ClientAddress, ip))
	answered := 0
	for deadline := time.Now().Add(30 * time.Second); answered < 3 && time.Now().Before(deadline) && ctx.Err() == nil; {
		mac, err := d.Neighbors.Probe(ip, 500*time.Millisecond)
		if err != nil {
			return err
		}
		if mac != nil {
			fmt.Printf("    reply: %s is at %s (%s's speaker)\n", ip, mac, d.nodeOf(mac))
			answered++
			time.Sleep(300 * time.Millisecond)
		}
	}
	if answered == 0 {
		return fmt.Errorf("nobody answered for %s", ip)
	}
	return nil
}

func (d *demo) nodeOf(mac net.HardwareAddr) string {
	if node, ok := d.NodeOf(mac); ok {
		return node
	}
	return "unknown"
}

// followUpgrade shows the rollout on one live line while the client asks for
// the address every 100 ms.
func (d *demo) followUpgrade(ctx context.Context, ip net.IP, tag string) error {
	var probes, answers int
	var gap, longest time.Duration
	lastAnswer := time.Now()
	deadline := time.Now().Add(5 * time.Minute)
	d.live.Store(true)
	defer d.live.Store(false)
	shown := ""
	for next := time.Now(); ctx.Err() == nil; next = next.Add(100 * time.Millisecond) {
		time.Sleep(time.Until(next))
		mac, err := d.Neighbors.Probe(ip, 90*time.Millisecond)
		if err != nil {
			return err
		}
		probes++
		if mac != nil {
			answers++
			gap, lastAnswer = time.Since(lastAnswer), time.Now()
			longest = max(longest, gap)
		}
		if probes%5 != 0 {
			continue
		}
		ready, total, err := d.readyPods(ctx, tag)
		if err != nil {
			continue
		}
		state := fmt.Sprintf("controller %d/1, speakers %d/%d on %s", ready["controller"], ready["speaker"], len(d.Nodes), tag)
		if state != shown || probes%50 == 0 {
			fmt.Printf("\r    %s; ARP answered %d of %d probes, longest gap %s   ", state, answers, probes, longest.Round(10*time.Millisecond))
			shown = state
		}
		if ready["controller"] == 1 && ready["speaker"] == len(d.Nodes) && total == len(d.Nodes)+1 {
			fmt.Println()
			step(fmt.Sprintf("upgraded: every MetalLB pod runs %s; %s was answered throughout (longest gap %s)", tag, ip, longest.Round(10*time.Millisecond)))
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Println()
			return errors.New("the upgrade did not finish within 5 minutes")
		}
	}
	fmt.Println()
	return ctx.Err()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

func step(s string) { fmt.Printf("==> %s\n", s) }
