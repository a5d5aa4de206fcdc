//go:build soak

package e2e

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// soakFor is how long the soak lasts (`make soak`; the issue asks for 10 min).
var soakFor = flag.Duration("soak-for", 10*time.Minute, "how long the fast profile is soaked under CPU starvation")

// Soak: with the Fast failure detection profile, the speakers at the lowest CPU
// priority (nice 19), a busy loop pinned to each of the machine's cores and
// the API server kept busy listing everything, a client asks for a dual-stack Service's
// addresses every 100 ms for the whole soak: the node that answers never
// changes, and no speaker ever sees another leave (declared dead). How often
// a speaker was suspected, and refuted it, is the figure docs/benchmarks.md
// records.
func TestSoakFastProfile(t *testing.T) {
	if !world.Enter(t, world.Last) {
		return
	}
	c := newMetallbCluster(t)
	startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB)).waitReady(t)
	c.setFailureDetection(t, "Fast")
	c.configureDualStack(t)
	c.waitProfile(t, "200ms")
	ips := c.expose(t, "web-dual", corev1.IPv4Protocol, corev1.IPv6Protocol)
	node := c.settledAnswerer(t, ips)
	speakers := c.reniceSpeakers(t, 19)
	watches := make([]*answerWatch, len(ips))
	for i, ip := range ips {
		watches[i] = c.watchAnswers(t, ip)
	}
	stopLoops := busyLoops(t)
	requests, stopRequests := c.busyAPIServer(t)
	started := time.Now()
	moved := func(a answer) bool { return a.node != "" && a.node != node }
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, *soakFor, true, func(context.Context) (bool, error) {
		for _, w := range watches {
			if _, ok := w.first(moved); ok {
				return true, nil
			}
		}
		return false, nil
	})
	stopRequests()
	stopLoops()
	soaked := time.Since(started).Round(time.Second)
	t.Logf("SOAK API server: %d lists of every pod, Service and ConfigMap served (%.0f/s)", requests.Load(), float64(requests.Load())/time.Since(started).Seconds())
	if err == nil {
		t.Errorf("after %s of the soak the addresses moved off %s, which had not failed", soaked, node)
	}
	for i, w := range watches {
		w.end()
		gap, _ := w.longestGap()
		answeredBy := node + " throughout"
		if a, ok := w.first(moved); ok {
			answeredBy = fmt.Sprintf("%s, then %s from %s", node, a.node, a.at.Sub(started).Round(time.Second))
		}
		t.Logf("SOAK %s: %s, %d probes, answered by %s, longest gap between answers %s",
			family(ips[i]), soaked, len(w.answers), answeredBy, gap.Round(time.Millisecond))
	}
	suspected, left := 0, 0
	for n, pod := range speakers {
		log := c.Runner.ContainerLog(pod, "speaker")
		suspected += strings.Count(log, "Suspect ")
		if l := strings.Count(log, "NodeLeave"); l > 0 {
			left += l
			t.Errorf("the speaker on %s saw %d speakers leave (declared dead) during the soak", n, l)
		}
	}
	t.Logf("SOAK memberlist: %d suspicions (all refuted in time: %v), %d members declared dead", suspected, left == 0, left)
}

// reniceSpeakers sets the speakers' niceness and returns them, by node.
func (c *metallbCluster) reniceSpeakers(t *testing.T, nice int) map[string]string {
	t.Helper()
	speakers := c.speakerPods(t)
	for _, pod := range speakers {
		if err := c.Runner.Renice(pod, nice); err != nil {
			t.Fatal(err)
		}
	}
	return speakers
}

// busyLoops keeps every core of the machine busy with a loop pinned to it, at
// normal priority, until the returned function is called.
func busyLoops(t *testing.T) func() {
	t.Helper()
	cpus := runtime.NumCPU()
	previous := runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + cpus) // the test's own goroutines keep theirs
	var stop atomic.Bool
	var wg sync.WaitGroup
	for cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				t.Errorf("pinning a busy loop to CPU %d: %v", cpu, err)
				return
			}
			for !stop.Load() {
			}
		}()
	}
	var once sync.Once
	end := func() {
		once.Do(func() {
			stop.Store(true)
			wg.Wait()
			runtime.GOMAXPROCS(previous)
		})
	}
	t.Cleanup(end)
	return end
}

// busyAPIServer keeps the API server busy, four clients listing every pod,
// Service and ConfigMap one after another, until the returned function is
// called; the counter tells how many lists it served.
func (c *metallbCluster) busyAPIServer(t *testing.T) (*atomic.Int64, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var served atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err1 := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				_, err2 := c.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
				_, err3 := c.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
				if err1 == nil && err2 == nil && err3 == nil {
					served.Add(3)
				}
			}
		}()
	}
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return &served, stop
}
