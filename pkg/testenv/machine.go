package testenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// What the test processes of one machine share: every package's test binary,
// and every story's copy, starts control planes and picks ports at once.

// startSlots is how many control planes may start at once on this machine.
// A start is CPU-bound (kube-apiserver builds its API and caches: about 3
// CPU-seconds, 6 s on an idle two-core machine); a dozen at once took 20-47 s
// each, and some past startTimeout. Queued starts wait for a slot instead,
// and the timeout runs from there.
const startSlots = 2

// takeStartSlot waits for one of the machine's start slots: a file locked
// for the length of a start. The lock goes with the process if it dies.
func takeStartSlot(ctx context.Context) (release func(), err error) {
	files := make([]*os.File, startSlots)
	for i := range files {
		if files[i], err = os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("%sstart-%d.lock", dirPrefix, i)), os.O_CREATE|os.O_RDWR, 0o600); err != nil {
			closeAll(files)
			return nil, err
		}
	}
	for i, f := range files {
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			return keepOnly(files, i), nil
		}
	}
	return waitForSlot(ctx, files)
}

// slotWait is how a wait on one start slot ended.
type slotWait struct {
	slot int
	err  error
}

// waitForSlot waits on every slot at once and keeps the first that comes: a
// wait on one slot chosen at random could sit behind two starts while the
// other slot freed (a story's control plane waited 49 s so, beside three).
// A file is closed only once its wait has ended, which lets that slot go
// again if it came late (or after ctx ended).
func waitForSlot(ctx context.Context, files []*os.File) (release func(), err error) {
	waits := make(chan slotWait, len(files))
	for i, f := range files {
		go func() { waits <- slotWait{i, unix.Flock(int(f.Fd()), unix.LOCK_EX)} }()
	}
	for pending := len(files); ; {
		select {
		case w := <-waits:
			pending--
			if w.err == nil {
				go closeAsTheyEnd(files, waits, pending)
				return func() { files[w.slot].Close() }, nil
			}
			files[w.slot].Close()
			if pending == 0 {
				return nil, fmt.Errorf("waiting for a slot to start a control plane: %w", w.err)
			}
		case <-ctx.Done():
			go closeAsTheyEnd(files, waits, pending)
			return nil, ctx.Err()
		}
	}
}

// closeAsTheyEnd closes the file of each of the pending waits once it ends.
func closeAsTheyEnd(files []*os.File, waits <-chan slotWait, pending int) {
	for range pending {
		files[(<-waits).slot].Close()
	}
}

// keepOnly closes every file but the one whose lock is held, and returns what
// releases that one.
func keepOnly(files []*os.File, held int) func() {
	for i, f := range files {
		if i != held {
			f.Close()
		}
	}
	return func() { files[held].Close() }
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// ports holds the ports this process reserved: each is locked, one byte at
// its offset, in a file all test processes share (an open file description
// lock, held until this process ends).
var ports = struct {
	sync.Mutex
	file     *os.File
	reserved map[int]bool
}{reserved: map[int]bool{}}

// ReservePort returns a port free on address that no other test process of
// this machine is given, for a component to listen on. It is below the
// kernel's ephemeral range: a port picked by listening on port 0 is in that
// range, and between its probe and the component's bind an outgoing
// connection of any process may take it as its local port (the operator's
// metrics server lost its port so once).
func ReservePort(address string) (int, error) {
	low, high, err := reservablePorts()
	if err != nil {
		return 0, err
	}
	ports.Lock()
	defer ports.Unlock()
	if ports.file == nil {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), dirPrefix+"ports.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return 0, err
		}
		ports.file = f
	}
	for range 1000 {
		port := low + rand.IntN(high-low)
		if ports.reserved[port] || !lockByte(ports.file, port) {
			continue
		}
		ports.reserved[port] = true // held whether free or not: tried once
		if l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port))); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port reservable between %d and %d on %s", low, high, address)
}

// ReserveAddr is ReservePort's port on address, as host:port.
func ReserveAddr(address string) (string, error) {
	port, err := ReservePort(address)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(address, strconv.Itoa(port)), nil
}

// lockByte takes the lock of one byte of f, without waiting.
func lockByte(f *os.File, offset int) bool {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(offset), Len: 1}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk) == nil
}

// reservablePorts are the ports ReservePort picks from: above the well-known
// and registered ranges services use, below the ephemeral range.
func reservablePorts() (low, high int, err error) {
	const floor = 20000
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, 0, errors.New("cannot read the ephemeral port range from /proc/sys/net/ipv4/ip_local_port_range")
	}
	ephemeral, err := strconv.Atoi(fields[0])
	if err != nil || ephemeral-floor < 1000 {
		return 0, 0, fmt.Errorf("the ephemeral port range starts at %s: no room below it for ports to reserve", fields[0])
	}
	return floor, ephemeral, nil
}
