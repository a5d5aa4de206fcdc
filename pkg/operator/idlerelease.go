package operator

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/memrelease"
)

// The operator works in bursts (an activation, an upgrade, a change of
// configuration) and is idle between them, for days. Go's collector lets the
// heap grow to twice what is live before it collects (GOGC=100), and returns
// what it freed to the system a little at a time: a settled operator would
// keep a burst's garbage, as much again as it needs, until the next burst.
// Once it goes quiet after one, it collects and returns that memory at once.
const (
	// idleCheck is how often the allocations are read: a burst has ended
	// when a whole period allocated next to nothing.
	idleCheck = 10 * time.Second
	// quietAllocation is the most an idle operator allocates in idleCheck:
	// its Lease renewals, the watch events of a cluster of thousands of nodes
	// (a kubelet's status every few minutes each) and a scrape of its metrics
	// every second (some 200 KiB each) stay under it; an activation allocates
	// tens of MiB.
	quietAllocation = 4 << 20
)

// GCPercent is the operator's collection target (GOGC) unless the
// environment sets one: a collection starts once the heap has grown by a
// quarter of what the last one found live, not by all of it. The operator
// lives long with a small live heap (some 10 MiB), and Go never moves what
// survives: every burst that lets the heap grow to twice its size leaves the
// survivors spread over twice the pages. At 2,000 nodes and 10,000 Services
// this took the heap in use of a settled operator from 16.5 to 13.4 MiB and
// its peak RSS from 71.4 to 61.6 MiB; with the DaemonSets' status paced
// (statusPaced in pkg/network/metallb), an upgrade of 2,000 speakers costs
// the CPU it did at Go's default (docs/benchmarks.md).
const GCPercent = 25

// SetGCPercent sets the collection target to GCPercent, unless GOGC is set.
func SetGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}

// shouldRelease decides, from the sample of the last check and this one,
// whether the operator has just gone quiet with memory to return.
func shouldRelease(last, now memrelease.Sample) bool {
	return now.Allocated-last.Allocated < quietAllocation && now.Returnable >= memrelease.WorthReleasing
}

// IdleRelease returns the memory of a finished burst of work to the system
// (debug.FreeOSMemory) when the operator goes quiet with at least
// memrelease.WorthReleasing to return: at most once every check, and in a quiet
// operator seldom. It runs on every replica: one that is not the leader also
// fills its caches in bursts.
type IdleRelease struct {
	// Every is how often the allocations are read (idleCheck unless set).
	Every time.Duration
	// Released, when set, is told of each release and what it returned.
	Released func(returned uint64)
}

// Start runs the release until ctx ends.
func (r IdleRelease) Start(ctx context.Context) error {
	every := r.Every
	if every == 0 {
		every = idleCheck
	}
	heap := memrelease.NewHeap()
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	last := heap.Read()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		now := heap.Read()
		if shouldRelease(last, now) {
			var returned uint64
			returned, now = heap.Release(now)
			if r.Released != nil {
				r.Released(returned)
			}
		}
		last = now
	}
}

// NeedLeaderElection says it runs on every replica.
func (IdleRelease) NeedLeaderElection() bool { return false }
