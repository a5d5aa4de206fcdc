package testenv

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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
	t.Setenv("TMPDIR", t.TempDir()) // slots of this test alone
	var releases []func()
	for range startSlots {
		release, err := takeStartSlot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
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
