package memrelease

import (
	"runtime"
	"testing"
)

var kept, garbage []byte

// With the real collector: what a burst left is returned when it is worth
// it, and nothing is done when it is not.
func TestReleaseIfWorth(t *testing.T) {
	// 64 MiB live set the heap's goal at 128 MiB, so that the burst's 32 MiB
	// stay garbage until the release collects them.
	kept = make([]byte, 64<<20)
	t.Cleanup(func() { kept = nil })
	runtime.GC()
	garbage = make([]byte, 32<<20)
	garbage = nil
	if n := ReleaseIfWorth(); n < 30<<20 {
		t.Errorf("after a burst of 32 MiB, returned %d bytes, want nearly all of it", n)
	}
	garbage = make([]byte, 2<<20)
	garbage = nil
	before := NewHeap().Read()
	if before.Returnable < 1<<20 || before.Returnable >= WorthReleasing {
		t.Fatalf("%d bytes returnable after a release and 2 MiB of garbage, want 1 MiB to %d", before.Returnable, WorthReleasing)
	}
	if n := ReleaseIfWorth(); n != 0 {
		t.Errorf("with %d bytes to return, under WorthReleasing, returned %d", before.Returnable, n)
	}
	if after := NewHeap().Read(); after.Returnable < 1<<20 {
		t.Errorf("with %d bytes to return, under WorthReleasing, the heap was collected anyway (%d left)", before.Returnable, after.Returnable)
	}
}
