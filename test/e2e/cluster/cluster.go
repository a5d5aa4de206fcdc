package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

// Options change what Start starts.
type Options struct {
	// ControlPlane, if set, changes the control plane's options.
	ControlPlane func(*testenv.Options)
	// Images are images the test nodes pull beside MetalLB's, by their whole
	// reference.
	Images map[string]noderunner.Image
	// Logf, if set, hears the node runner start and stop containers.
	Logf func(format string, args ...any)
	// Progress, if set, hears each part of the cluster start and stop.
	Progress func(step string)
}

// Cluster is a control plane whose three kwok nodes have network namespaces
// on a test bridge, where the node runner runs the pods RunnerPods selects.
type Cluster struct {
	Env    *testenv.Env
	Client kubernetes.Interface
	Net    *noderunner.Network
	Runner *noderunner.Runner
	// Neighbors asks from the bridge's client which node answers for an address.
	Neighbors *noderunner.NeighborProber
	Nodes     []testenv.Node

	progress func(string)
	stops    []func() // in start order
}

// Start starts the test network, the control plane, the node runner and the
// neighbor prober. On error it stops what it started.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	images, err := registry(opts.Images)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Nodes: testenv.Nodes(3), progress: opts.Progress}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err = c.startNetwork(); err != nil {
		return nil, err
	}
	if err = c.startControlPlane(ctx, opts.ControlPlane); err != nil {
		return nil, err
	}
	runner := noderunner.Options{Client: c.Client, Network: c.Net, APIServer: c.Env.Config.Host,
		Selector: RunnerPods, Pull: pullFrom(images), Logf: opts.Logf}
	if err = c.startRunner(ctx, runner); err != nil {
		return nil, err
	}
	if c.Neighbors, err = noderunner.NewNeighborProber(c.Net.Client); err != nil {
		return nil, err
	}
	c.onStop("", c.Neighbors.Close)
	return c, nil
}

// Stop stops what Start started, newest first.
func (c *Cluster) Stop() {
	for i := len(c.stops) - 1; i >= 0; i-- {
		c.stops[i]()
	}
	c.stops = nil
}

// NodeOf names the node whose MAC address on the bridge is mac.
func (c *Cluster) NodeOf(mac net.HardwareAddr) (string, bool) {
	for _, n := range c.Nodes {
		if c.Net.Node(n.Name).MAC.String() == mac.String() {
			return n.Name, true
		}
	}
	return "", false
}

func (c *Cluster) startNetwork() error {
	addrs := map[string]string{}
	var ips []string
	for _, n := range c.Nodes {
		addrs[n.Name] = n.InternalIP
		ips = append(ips, n.InternalIP)
	}
	c.say(fmt.Sprintf("making the test network: a bridge, a network namespace per node (%s) and a client (%s)",
		strings.Join(ips, ", "), noderunner.ClientAddress))
	var err error
	if c.Net, err = noderunner.NewNetwork(addrs); err != nil {
		return err
	}
	c.onStop("removing the test network", c.Net.Close)
	return nil
}

// startControlPlane starts kube-controller-manager, kube-scheduler and kwok
// beside etcd and kube-apiserver, which listens on the bridge; kwok leaves the
// node runner's pods alone.
func (c *Cluster) startControlPlane(ctx context.Context, change func(*testenv.Options)) error {
	opts := testenv.Options{ControllerManager: true, Scheduler: true, Nodes: c.Nodes,
		KwokIgnoresPods: RunnerPods, Address: noderunner.HostAddress}
	if change != nil {
		change(&opts)
	}
	c.say(fmt.Sprintf("starting a control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with %d nodes", len(c.Nodes)))
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("starting the control plane: %v", err)
	}
	c.Env = env
	c.onStop("stopping the control plane", env.Stop)
	c.Client, err = kubernetes.NewForConfig(env.Config)
	return err
}

// startRunner starts the node runner with a folder of its own for the pods.
func (c *Cluster) startRunner(ctx context.Context, opts noderunner.Options) error {
	dir, err := os.MkdirTemp("", "cno-cluster-pods-")
	if err != nil {
		return err
	}
	c.onStop("", func() { _ = os.RemoveAll(dir) })
	opts.Dir = dir
	if c.Runner, err = noderunner.Start(ctx, opts); err != nil {
		return err
	}
	c.onStop("stopping the pods' containers", c.Runner.Close)
	return nil
}

// onStop has Stop call stop, saying what it stops when what is not empty.
func (c *Cluster) onStop(what string, stop func()) {
	c.stops = append(c.stops, func() {
		if what != "" {
			c.say(what)
		}
		stop()
	})
}

func (c *Cluster) say(step string) {
	if c.progress != nil {
		c.progress(step)
	}
}
