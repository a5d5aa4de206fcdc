package noderunner

import (
	"fmt"
	"net"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// NeighborProber asks, from a host's eth0, who has an address: by ARP for an
// IPv4 address, by NDP for an IPv6 one.
type NeighborProber struct {
	arp *arpProber
	ndp *ndpProber
}

// NewNeighborProber opens both probers' sockets on the host's eth0.
func NewNeighborProber(h *Host) (*NeighborProber, error) {
	arp, err := newARPProber(h)
	if err != nil {
		return nil, err
	}
	ndp, err := newNDPProber(h)
	if err != nil {
		arp.Close()
		return nil, err
	}
	return &NeighborProber{arp: arp, ndp: ndp}, nil
}

// Close closes the sockets.
func (p *NeighborProber) Close() {
	p.arp.Close()
	p.ndp.Close()
}

// Probe asks once who has target and returns the hardware address of the
// first answer within timeout; nil when none came.
func (p *NeighborProber) Probe(target net.IP, timeout time.Duration) (net.HardwareAddr, error) {
	macs, err := p.ask(target, timeout, true)
	if len(macs) == 0 {
		return nil, err
	}
	return macs[0], err
}

// Answers asks once who has target and returns every hardware address that
// answered within window.
func (p *NeighborProber) Answers(target net.IP, window time.Duration) ([]net.HardwareAddr, error) {
	return p.ask(target, window, false)
}

// ask asks by the protocol of target's family.
func (p *NeighborProber) ask(target net.IP, timeout time.Duration, first bool) ([]net.HardwareAddr, error) {
	switch {
	case target.To4() != nil:
		return p.arp.ask(target, timeout, first)
	case len(target) == net.IPv6len:
		return p.ndp.ask(target, timeout, first)
	}
	return nil, fmt.Errorf("no neighbor protocol for address %v", target)
}

// drain discards what the socket holds: answers that came late to an earlier
// probe, or a second answerer's that a Probe left unread, would otherwise
// pass for answers to the next.
func drain(fd int, buf []byte) {
	for {
		if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err != nil && err != unix.EINTR {
			return
		}
	}
}

// collect reads fd until timeout, or the first answer when first, and returns
// the distinct hardware addresses that answer finds in what it reads (nil for
// packets that are no answer).
func collect(fd int, buf []byte, timeout time.Duration, first bool, answer func([]byte) net.HardwareAddr) ([]net.HardwareAddr, error) {
	deadline := time.Now().Add(timeout)
	var macs []net.HardwareAddr
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return macs, nil
		}
		// A zero timeout would wait for ever: never less than a microsecond.
		tv := unix.NsecToTimeval(max(left, time.Microsecond).Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return nil, err
		}
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if mac := answer(buf[:n]); mac != nil && !slices.ContainsFunc(macs, func(m net.HardwareAddr) bool { return m.String() == mac.String() }) {
			macs = append(macs, mac)
			if first {
				return macs, nil
			}
		}
	}
}
