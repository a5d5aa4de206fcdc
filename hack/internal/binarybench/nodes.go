package binarybench

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const (
	// nodesPerCall is how many nodes one testenv.AddNodes call creates and
	// waits for; several calls run at once.
	nodesPerCall = 50
	// MaxNodes is the addresses of nodeNet.
	MaxNodes = 1 << 17
)

// nodeNet is the benchmarking network (RFC 2544) the nodes' addresses come from.
var nodeNet = netip.MustParsePrefix("198.18.0.0/15")

// AddNodes creates n kwok nodes, concurrency at a time, and waits until kwok
// reports each Ready.
func (b *Bench) AddNodes(ctx context.Context, n, concurrency int) error {
	if n > MaxNodes {
		return fmt.Errorf("%d nodes: at most %d (their addresses come from %s)", n, MaxNodes, nodeNet)
	}
	start := time.Now()
	nodes := make([]testenv.Node, n)
	ip := nodeNet.Addr()
	for i := range nodes {
		ip = ip.Next()
		nodes[i] = testenv.Node{Name: fmt.Sprintf("kwok-%d", i), InternalIP: ip.String()}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := 0; i < n; i += nodesPerCall {
		chunk := nodes[i:min(i+nodesPerCall, n)]
		g.Go(func() error { return b.Env.AddNodes(gctx, chunk...) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Printf("%d kwok nodes Ready in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}
