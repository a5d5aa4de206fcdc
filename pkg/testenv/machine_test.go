package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Ports reserved are distinct, below the ephemeral range, free to listen on,
// and refused to any other open file description of the shared lock file,
// as another test process would hold.
func TestReservedPortsAreDistinctAndHeld(t *testing.T) {
	low, high, err := reservablePorts()
	if err != nil {
		t.Fatal(err)
	}
	var other *os.File // opened once the file exists
	seen := map[int]bool{}
	for range 50 {
		port, err := ReservePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] || port < low || port >= high {
			t.Fatalf("port %d reserved twice, or outside [%d, %d)", port, low, high)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("a reserved port is not free: %v", err)
		}
		l.Close()
		if other == nil {
			if other, err = os.OpenFile(filepath.Join(os.TempDir(), dirPrefix+"ports.lock"), os.O_RDWR, 0); err != nil {
				t.Fatal(err)
			}
			defer other.Close()
		}
		if lockByte(other, port) {
			t.Fatalf("port %d, reserved here, could be reserved by another process too", port)
		}
	}
}

// No more control planes than startSlots start at once: a start waits until
// one of those under way ends, or gives up when its context ends.
func TestStartsWaitForASlot(t *testing.T) {
	releases := takeEverySlot(t)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := takeStartSlot(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a start beyond %d took a slot (err %v), want it to wait", startSlots, err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := takeStartSlot(t.Context())
		if err == nil {
			release()
		}
		got <- err
	}()
	for _, release := range releases {
		release()
	}
	if err := <-got; err != nil {
		t.Fatalf("a waiting start did not get a slot once they were free: %v", err)
	}
}

// takeEverySlot takes every start slot of a TMPDIR of the test's own, and
// returns what releases each, in slot order.
func takeEverySlot(t *testing.T) []func() {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	var releases []func()
	for range startSlots {
		release, err := takeStartSlot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	return releases
}

// A start waiting for a slot takes the first that frees, whichever it is.
func TestAWaitingStartTakesWhicheverSlotFrees(t *testing.T) {
	for freed := range startSlots {
		t.Run(fmt.Sprint("slot ", freed), func(t *testing.T) {
			releases := takeEverySlot(t)
			defer func() {
				for _, release := range releases {
					release()
				}
			}()
			got := make(chan error, 1)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			go func() {
				release, err := takeStartSlot(ctx)
				if err == nil {
					release()
				}
				got <- err
			}()
			waitUntilAStartWaits(t)
			releases[freed]()
			releases[freed] = func() {}
			if err := <-got; err != nil {
				t.Fatalf("a waiting start did not take slot %d once it alone was free: %v", freed, err)
			}
		})
	}
}

// waitUntilAStartWaits waits until /proc/locks shows a start blocked on a
// slot of this test's TMPDIR.
func waitUntilAStartWaits(t *testing.T) {
	t.Helper()
	inodes := map[string]bool{}
	for i := range startSlots {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(os.TempDir(), fmt.Sprintf("%sstart-%d.lock", dirPrefix, i)), &st); err != nil {
			t.Fatal(err)
		}
		inodes[strconv.FormatUint(st.Ino, 10)] = true
	}
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		locks, err := os.ReadFile("/proc/locks")
		for _, line := range strings.Split(string(locks), "\n") {
			// "1: -> FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF"
			f := strings.Fields(line)
			if len(f) > 6 && f[1] == "->" && f[2] == "FLOCK" && inodes[f[6][strings.LastIndex(f[6], ":")+1:]] {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("no start waits for a slot: %v", err)
	}
}
