package e2e

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A node dies: cut off the network and its speaker killed, it sends nothing
// more, not even the close of its BGP session; the router drops its next hop
// when the session's hold timer expires, and keeps the others throughout.
// BGP_HOLD_TIME sets the BGPPeer's holdTime (3s in make test; the docs'
// figure for MetalLB's default is measured with 90s).
func TestBGPNodeDies(t *testing.T) {
	hold, err := time.ParseDuration(cmp.Or(os.Getenv("BGP_HOLD_TIME"), "3s"))
	if err != nil {
		t.Fatalf("BGP_HOLD_TIME: %v", err)
	}
	forEachBackend(t, func(t *testing.T, backend string) { nodeDies(t, hold, backend) })
}

func nodeDies(t *testing.T, hold time.Duration, backend string) {
	c, _, ip := newBGPServing(t, hold.String(), backend)
	dead, withdrawn, samples := c.killNode(t, ip, hold+time.Minute)
	t.Logf("BGP NODE DIES (%s, holdTime %s): the router dropped %s's next hop %s after the node died; %d samples, fewest next hops %d",
		backend, hold, dead, withdrawn.Round(10*time.Millisecond), len(samples), fewestNextHops(samples))
	// The hold timer runs out between one keepalive interval (a third of it)
	// short of the hold time and the hold time after the last keepalive; a
	// sample every 100 ms sees it within that.
	if earliest, latest := hold-hold/3-100*time.Millisecond, hold+time.Second; withdrawn < earliest || withdrawn > latest {
		t.Errorf("the next hop went %s after the node died; the hold timer (%s) expires between %s and %s", withdrawn, hold, earliest, latest)
	}
}

// killNode makes the last node die (its link down, then its containers
// SIGKILLed: not even the close of a session reaches the router), waits
// until the router's next hops to ip are the other nodes', and returns the
// dead node, how long after its death its next hop went, and the router's
// next hops sampled meanwhile, which must always hold the other nodes.
func (c *bgpCluster) killNode(t *testing.T, ip net.IP, timeout time.Duration) (string, time.Duration, []nextHopSample) {
	t.Helper()
	s := c.sampleNextHops(t, ip)
	dead := c.Nodes[len(c.Nodes)-1].Name
	died := time.Now()
	if err := c.Net.Disconnect(dead); err != nil {
		t.Fatal(err)
	}
	c.Runner.StopNode(dead, syscall.SIGKILL)
	others := slices.DeleteFunc(c.nodeNames(), func(n string) bool { return n == dead })
	s.waitFor(t, timeout, others)
	samples := s.stop()
	gone, ok := s.firstWithout(dead, died)
	if !ok {
		t.Fatalf("no sample without %s's next hop", dead)
	}
	if n := fewestNextHops(samples); n < len(others) {
		t.Errorf("the router was down to %d next hops; the %d other nodes must stay", n, len(others))
	}
	return dead, gone.Sub(died), samples
}

// nextHopSample is the router's next hops to an address at a time.
type nextHopSample struct {
	at    time.Time
	nodes []string
}

// nextHopSampler asks the router for its next hops to an address every
// 100 ms, until stopped.
type nextHopSampler struct {
	mu       sync.Mutex
	samples  []nextHopSample
	recorded chan struct{} // a sample was recorded
	done     chan struct{}
	stopped  sync.WaitGroup
}

func (c *bgpCluster) sampleNextHops(t *testing.T, ip net.IP) *nextHopSampler {
	s := &nextHopSampler{recorded: make(chan struct{}, 1), done: make(chan struct{})}
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if nodes, err := c.nextHops(t.Context(), ip); err == nil {
				s.mu.Lock()
				s.samples = append(s.samples, nextHopSample{time.Now(), nodes})
				s.mu.Unlock()
				select {
				case s.recorded <- struct{}{}:
				default:
				}
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// waitFor waits until the sampler records the router's next hops as exactly
// the nodes: what the story then reads of the samples holds what the wait
// saw, as the two are one observation.
func (s *nextHopSampler) waitFor(t *testing.T, timeout time.Duration, nodes []string) {
	t.Helper()
	nodes = slices.Sorted(slices.Values(nodes))
	s.waitSample(t, timeout, fmt.Sprintf("next hops %q", nodes), func(sample nextHopSample) bool { return slices.Equal(sample.nodes, nodes) })
}

// waitUntil waits until the sampler has recorded a sample after at.
func (s *nextHopSampler) waitUntil(t *testing.T, at time.Time) {
	t.Helper()
	s.waitSample(t, time.Until(at)+10*time.Second, "a sample after "+at.Format(time.StampMilli),
		func(sample nextHopSample) bool { return sample.at.After(at) })
}

// waitSample waits until the sampler records a sample that matches.
func (s *nextHopSampler) waitSample(t *testing.T, timeout time.Duration, what string, matches func(nextHopSample) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var last []string
	for seen := 0; ; {
		s.mu.Lock()
		fresh := s.samples[seen:]
		seen = len(s.samples)
		s.mu.Unlock()
		for _, sample := range fresh {
			if last = sample.nodes; matches(sample) {
				return
			}
		}
		select {
		case <-s.recorded:
		case <-deadline.C:
			t.Fatalf("no sample of the router's next hops with %s after %s; the last: %q", what, timeout, last)
		}
	}
}

// stop ends the sampling, once, and returns the samples.
func (s *nextHopSampler) stop() []nextHopSample {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.stopped.Wait()
	return s.samples
}

// firstWithout returns the time of the first sample after since without the
// node, once the sampling has ended.
func (s *nextHopSampler) firstWithout(node string, since time.Time) (time.Time, bool) {
	s.stop()
	at := s.firstSince(since, func(nodes []string) bool { return !slices.Contains(nodes, node) })
	return at, !at.IsZero()
}

// firstSince returns the time of the first sample after since whose next
// hops match, or the zero time.
func (s *nextHopSampler) firstSince(since time.Time, matches func([]string) bool) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sample := range s.samples {
		if sample.at.After(since) && matches(sample.nodes) {
			return sample.at
		}
	}
	return time.Time{}
}

func fewestNextHops(samples []nextHopSample) int {
	fewest := -1
	for _, s := range samples {
		if fewest < 0 || len(s.nodes) < fewest {
			fewest = len(s.nodes)
		}
	}
	return fewest
}

// longestAbsence returns the longest time one node was missing from the
// samples, and which.
func longestAbsence(samples []nextHopSample, nodes []string) (time.Duration, string) {
	var longest time.Duration
	var who string
	for _, node := range nodes {
		var since time.Time
		for _, s := range samples {
			switch present := slices.Contains(s.nodes, node); {
			case !present && since.IsZero():
				since = s.at
			case present && !since.IsZero():
				if d := s.at.Sub(since); d > longest {
					longest, who = d, node
				}
				since = time.Time{}
			}
		}
	}
	return longest, who
}
