package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// rssGoal is issue 12's goal for the operator's resident set.
const rssGoal = 50 << 20

// The upstream metallb-operator's figures, activated and settled on a
// cluster of upstreamNodes and upstreamServices LoadBalancer Services
// (issue 28): the operator's RSS at most upstreamRSS, its Go heap in use under
// upstreamHeap.
const (
	upstreamNodes          = 2000
	upstreamServices       = 10000
	upstreamRSS      int64 = 601 * (1 << 20) / 10
	upstreamHeap     int64 = 122 * (1 << 20) / 10
)

type config struct {
	binary      string
	keepLog     string
	metricsURL  string
	heapProfile string
	nodes       int
	services    int
	namespaces  int
	concurrency int
	settle      time.Duration
	idle        time.Duration
	nodeAddress bool
}

func main() {
	var c config
	flag.StringVar(&c.binary, "binary", "bin/cluster-network-operator", "the operator binary (`make build`)")
	flag.StringVar(&c.keepLog, "keep-log", "", "write the operator's log to this file and keep it (default: a temporary file, removed)")
	flag.StringVar(&c.metricsURL, "metrics-url", "https://127.0.0.1:8443/metrics", "where the default --metrics-bind-address serves the operator's metrics (http or https)")
	flag.StringVar(&c.heapProfile, "heap-profile", "", "also start the operator with --pprof-bind-address="+binarybench.PprofAddr+" and write its heap profile (go tool pprof) to this file after measuring, and its goroutine profile to the file's name with .goroutines")
	flag.IntVar(&c.nodes, "nodes", upstreamNodes, "kwok nodes")
	flag.IntVar(&c.services, "services", upstreamServices, "Services of type LoadBalancer")
	flag.IntVar(&c.namespaces, "namespaces", 10, "namespaces the Services are spread over")
	flag.IntVar(&c.concurrency, "concurrency", 16, "creations in flight at once")
	// 20 s: the operator returns a burst's memory once it has allocated next to
	// nothing for a whole 10 s check (operator.IdleRelease), 10 to 20 s after
	// its last reconcile; a settled operator is measured as users see it.
	flag.DurationVar(&c.settle, "settle", 20*time.Second, "how long the operator's reconcile count must stay unchanged for it to count as settled")
	flag.DurationVar(&c.idle, "idle", 0, "after measuring, leave the operator idle this long and measure again (the runtime collects garbage at least every 2 minutes and returns freed memory gradually)")
	flag.BoolVar(&c.nodeAddress, "node-address", false, "instead of a pool, measure with nothing configured (the node-address mode off: no cache of Services), then enable the mode on the MetalLB object and measure again: reconciles per second, and RSS at most "+fmt.Sprint(nodeAddressRatio)+" times that with the mode off")
	flag.Parse()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "memory-bench:", err)
		os.Exit(2)
	}
	binarybench.Main("memory-bench", func(ctx context.Context) error { return run(ctx, c) })
}

func (c config) validate() error {
	switch {
	case flag.NArg() > 0:
		return fmt.Errorf("no arguments expected, got %q", flag.Args())
	case c.nodes < 0 || c.services < 0 || c.namespaces < 1 || c.concurrency < 1 || c.settle <= 0:
		return fmt.Errorf("-nodes and -services must not be negative, -namespaces, -concurrency and -settle positive")
	case c.nodes > binarybench.MaxNodes:
		return fmt.Errorf("-nodes: at most %d", binarybench.MaxNodes)
	}
	u, err := url.Parse(c.metricsURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Port() == "" {
		return fmt.Errorf("-metrics-url %q: want http(s)://host:port/path", c.metricsURL)
	}
	return nil
}

func run(ctx context.Context, c config) error {
	u, _ := url.Parse(c.metricsURL) // validated
	metricsAddr := net.JoinHostPort("", u.Port())
	b, logFile, stop, err := binarybench.Start(ctx, c.binary, c.keepLog, testenv.Options{Kwok: true}, metricsAddr)
	defer stop()
	if err != nil {
		return err
	}
	if err := b.AddNodes(ctx, c.nodes, c.concurrency); err != nil {
		return err
	}
	if err := addServices(ctx, b, c.services, c.namespaces, c.concurrency); err != nil {
		return err
	}
	token, err := metricsToken(ctx, b)
	if err != nil {
		return err
	}
	addrs := []string{metricsAddr}
	if c.heapProfile != "" {
		b.OperatorFlags = []string{"--pprof-bind-address=" + binarybench.PprofAddr}
		addrs = append(addrs, binarybench.PprofAddr)
	}
	if err := b.StartOperator(ctx, c.binary, logFile, addrs...); err != nil {
		return err
	}
	m := &metricsReader{url: c.metricsURL, token: token, client: metricsClient()}
	if c.nodeAddress {
		err := compareNodeAddress(ctx, b, m, c)
		return errors.Join(err, c.saveHeapProfile(ctx))
	}
	if err := activate(ctx, b, m, c.settle); err != nil {
		return err
	}
	return report(ctx, b.Operator, m, c)
}

// report measures the settled operator, and again after -idle when set,
// then saves the heap profile when asked.
func report(ctx context.Context, op *binarybench.Operator, m *metricsReader, c config) error {
	var missed *binarybench.GoalMissed
	if err := measure(op, m, c, "settled", &missed); err != nil {
		return err
	}
	if c.idle > 0 {
		select {
		case <-time.After(c.idle):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := measure(op, m, c, "idle for "+c.idle.String(), &missed); err != nil {
			return err
		}
	}
	if err := c.saveHeapProfile(ctx); err != nil {
		return err
	}
	if missed != nil {
		return missed
	}
	return nil
}

// activate creates a pool and waits until MetalLB's workloads exist and the
// operator has settled.
func activate(ctx context.Context, b *binarybench.Bench, m *metricsReader, settle time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	w, err := b.WatchWorkloads(ctx)
	if err != nil {
		return err
	}
	defer w.Stop()
	start := time.Now()
	if err := b.CreatePool(ctx, binarybench.MetalLBNamespace, "bench"); err != nil {
		return err
	}
	if err := w.Until(ctx, true); err != nil {
		return err
	}
	// Not a figure of this benchmark: it includes the API server's set-up
	// for its first IPAddressPool.
	fmt.Printf("activated in %s\n", time.Since(start).Round(time.Millisecond))
	return waitSettled(ctx, m, settle)
}

// saveHeapProfile writes the operator's heap profile when -heap-profile asks,
// and beside it its goroutines (their stacks take memory too).
func (c config) saveHeapProfile(ctx context.Context) error {
	if c.heapProfile == "" {
		return nil
	}
	return errors.Join(binarybench.SaveProfile(ctx, "heap", c.heapProfile),
		binarybench.SaveProfile(ctx, "goroutine", c.heapProfile+".goroutines"))
}

// measure reads the operator's memory and compares it with the goal, adding
// to missed when it is over.
func measure(op *binarybench.Operator, m *metricsReader, c config, when string, missed **binarybench.GoalMissed) error {
	mem, heap, err := readMemory(op, m, c, when)
	if err != nil {
		return err
	}
	if mem.RSS > rssGoal {
		*missed = binarybench.Miss(*missed, "%s: RSS %s is over the goal of %s", when, binarybench.MiB(mem.RSS), binarybench.MiB(rssGoal))
	}
	if c.nodes == upstreamNodes && c.services == upstreamServices {
		if mem.RSS > upstreamRSS || heap >= upstreamHeap {
			*missed = binarybench.Miss(*missed, "%s: RSS %s and heap in use %s, where the upstream operator's are %s and %s",
				when, binarybench.MiB(mem.RSS), binarybench.MiB(heap), binarybench.MiB(upstreamRSS), binarybench.MiB(upstreamHeap))
		} else {
			fmt.Printf("%s: under the upstream operator's RSS (%s) and heap in use (%s)\n", when, binarybench.MiB(upstreamRSS), binarybench.MiB(upstreamHeap))
		}
	}
	return nil
}

// readMemory reads the operator's memory, from /proc, and its Go heap in use,
// from its metrics, and prints them.
func readMemory(op *binarybench.Operator, m *metricsReader, c config, when string) (binarybench.Memory, int64, error) {
	mem, err := binarybench.ProcessMemory(op.PID())
	if err != nil {
		return mem, 0, err
	}
	metrics, err := m.read()
	if err != nil {
		return mem, 0, err
	}
	heap, ok := metrics["go_memstats_heap_inuse_bytes"]
	if !ok {
		return mem, 0, fmt.Errorf("%s has no go_memstats_heap_inuse_bytes", m.url)
	}
	fmt.Printf("%s, nodes %d, services %d: RSS %s (anonymous %s, files %s), peak RSS %s, Go heap in use %s"+
		" (kept free %s, stacks %s, %.0f goroutines, %.0f collections)\n",
		when, c.nodes, c.services, binarybench.MiB(mem.RSS), binarybench.MiB(mem.Anon), binarybench.MiB(mem.File), binarybench.MiB(mem.Peak), binarybench.MiB(int64(heap)),
		binarybench.MiB(int64(metrics["go_memstats_heap_idle_bytes"]-metrics["go_memstats_heap_released_bytes"])),
		binarybench.MiB(int64(metrics["go_memstats_stack_inuse_bytes"])), metrics["go_goroutines"], metrics["go_gc_duration_seconds_count"])
	return mem, int64(heap), nil
}
