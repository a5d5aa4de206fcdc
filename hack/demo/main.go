package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
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
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
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
	step("takeover: kubectl annotate namespace " + metallbNamespace + " " + manifests.AdoptAnnotation + "=true")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, manifests.AdoptAnnotation)
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
		events, err := d.Client.EventsV1().Events(metallbNamespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + plan.ReasonForeignObjects})
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

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

func step(s string) { fmt.Printf("==> %s\n", s) }
