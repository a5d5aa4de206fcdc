package e2e

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// Failover: the node answering for the Service loses its speaker, first hard
// (SIGKILL, as when the node dies), then, on the node that took over,
// gracefully (SIGTERM, as when it shuts down); each time another node answers.
// The gaps go to docs/benchmarks.md.
func TestFailover(t *testing.T) {
	c, _, ip, first := newServingCluster(t)

	second, hard := c.failover(t, ip, first, syscall.SIGKILL, 30*time.Second)
	t.Logf("FAILOVER hard (SIGKILL %s's speaker): %s answers after %s (goal ≤ 5s)", first, second, hard.Round(time.Millisecond))
	third, graceful := c.failover(t, ip, second, syscall.SIGTERM, 10*time.Second)
	t.Logf("FAILOVER graceful (SIGTERM %s's speaker): %s answers after %s (goal ≤ 1s)", second, third, graceful.Round(time.Millisecond))
	if graceful > time.Second {
		t.Errorf("after a graceful stop the address went unanswered for %s; the speaker leaving memberlist should hand it over within 1s", graceful)
	}
}

// failover stops a node's speaker with sig and returns the node that answers
// next and how long the address went unanswered.
func (c *metallbCluster) failover(t *testing.T, ip net.IP, node string, sig syscall.Signal, timeout time.Duration) (string, time.Duration) {
	t.Helper()
	w := c.watchARP(t, ip)
	time.Sleep(5 * probeEvery)
	stopped := time.Now()
	c.runner.StopNode(node, sig)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		time.Sleep(probeEvery)
		if _, ok := w.firstAnswerAfter(stopped, node); ok {
			break
		}
	}
	w.end()
	a, ok := w.firstAnswerAfter(stopped, node)
	if !ok {
		t.Fatalf("no other node answered for %s within %s of stopping %s's speaker with %s", ip, timeout, node, sig)
	}
	return a.node, a.at.Sub(stopped)
}
