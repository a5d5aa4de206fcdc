package operator

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/memrelease"
)

func TestShouldRelease(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name      string
		last, now memrelease.Sample
		want      bool
	}{
		{"quiet after a burst", memrelease.Sample{Allocated: 100 * mib}, memrelease.Sample{Allocated: 100*mib + 512<<10, Returnable: 20 * mib}, true},
		{"still busy", memrelease.Sample{Allocated: 100 * mib}, memrelease.Sample{Allocated: 110 * mib, Returnable: 20 * mib}, false},
		{"quiet with little to return", memrelease.Sample{Allocated: 100 * mib}, memrelease.Sample{Allocated: 100 * mib, Returnable: 3 * mib}, false},
		{"allocated just the quiet amount", memrelease.Sample{}, memrelease.Sample{Allocated: quietAllocation, Returnable: memrelease.WorthReleasing}, false},
		{"just worth it", memrelease.Sample{}, memrelease.Sample{Allocated: quietAllocation - 1, Returnable: memrelease.WorthReleasing}, true},
	} {
		if got := shouldRelease(c.last, c.now); got != c.want {
			t.Errorf("%s: shouldRelease = %v, want %v", c.name, got, c.want)
		}
	}
}

var kept, garbage [][]byte

// The release runs the real collector: after a burst of allocations, once
// quiet, what the burst left is returned, and the release is not repeated
// while nothing is allocated.
func TestIdleReleaseReturnsABurstsMemory(t *testing.T) {
	// 64 MiB live set the heap's goal at 128 MiB, so that the burst's 32 MiB
	// stay garbage until the release collects them.
	kept = allocate(64)
	t.Cleanup(func() { kept = nil })
	runtime.GC()
	released := make(chan uint64, 10)
	r := IdleRelease{Every: 200 * time.Millisecond, Released: func(n uint64) { released <- n }}
	go r.Start(t.Context())
	garbage = allocate(32)
	garbage = nil
	select {
	case n := <-released:
		if n < 30<<20 {
			t.Errorf("the release returned %d bytes, want nearly the burst's 32 MiB", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no release within 10 s of a burst of 32 MiB")
	}
	select {
	case <-released:
		t.Error("released again with nothing allocated")
	case <-time.After(time.Second):
	}
}

func allocate(mib int) [][]byte {
	var b [][]byte
	for range mib {
		b = append(b, make([]byte, 1<<20))
	}
	return b
}

func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		name string
		gogc string // "" unset
		want int
	}{
		{"GOGC unset", "", GCPercent},
		{"GOGC set: the collector took it at start, and keeps it", "100", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gogc != "" {
				t.Setenv("GOGC", tc.gogc)
			} else {
				// t.Setenv restores it after; unset it for this row.
				t.Setenv("GOGC", "")
				os.Unsetenv("GOGC")
			}
			debug.SetGCPercent(100)
			SetGCPercent()
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("collection target %d, want %d", got, tc.want)
			}
		})
	}
}
