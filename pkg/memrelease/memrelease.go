// Package memrelease returns the memory of a finished burst of work to the
// system at once, when there is enough of it: Go returns what it freed a
// little at a time, over minutes. The operator's idle release
// (operator.IdleRelease) finds the end of a burst by watching the
// allocations; work that knows when its own burst ends (a sweep of every
// Service) says so itself (ReleaseIfWorth).
package memrelease

import (
	"runtime/debug"
	"runtime/metrics"
)

// WorthReleasing is the least garbage and free heap, together, a release is
// for: under it a collection costs more than it returns.
const WorthReleasing = 4 << 20

// Sample is what a release decides on, from runtime/metrics.
type Sample struct {
	Allocated  uint64 // bytes allocated since the process started
	Returnable uint64 // garbage not collected yet, and free heap not returned
}

var heapMetrics = []string{
	"/gc/heap/allocs:bytes",
	"/memory/classes/heap/objects:bytes", // live objects and garbage not yet swept
	"/gc/heap/live:bytes",                // what the last collection found live
	"/memory/classes/heap/free:bytes",    // free heap not returned to the system
}

// Heap reads the heap's Samples.
type Heap struct{ samples []metrics.Sample }

// NewHeap returns a Heap; reads of one are not safe at once.
func NewHeap() *Heap {
	h := &Heap{samples: make([]metrics.Sample, len(heapMetrics))}
	for i, name := range heapMetrics {
		h.samples[i].Name = name
	}
	return h
}

// Read samples the heap now.
func (h *Heap) Read() Sample {
	metrics.Read(h.samples)
	v := func(i int) uint64 { return h.samples[i].Value.Uint64() }
	garbage := v(1) - min(v(1), v(2))
	return Sample{Allocated: v(0), Returnable: garbage + v(3)}
}

// Release collects and returns the free heap to the system
// (debug.FreeOSMemory); it tells how much of before's returnable memory it
// returned, and the heap after.
func (h *Heap) Release(before Sample) (returned uint64, after Sample) {
	debug.FreeOSMemory()
	after = h.Read()
	return before.Returnable - min(before.Returnable, after.Returnable), after
}

// ReleaseIfWorth returns what a burst of work that has just ended left,
// if it is WorthReleasing, and tells how much it returned.
func ReleaseIfWorth() uint64 {
	h := NewHeap()
	s := h.Read()
	if s.Returnable < WorthReleasing {
		return 0
	}
	returned, _ := h.Release(s)
	return returned
}
