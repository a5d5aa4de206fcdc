package noderunner

import (
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// ndpProber asks, from a host's eth0, who has an IPv6 address, as ndisc6
// does: it multicasts a Neighbor Solicitation and reads the Neighbor
// Advertisements that answer it.
type ndpProber struct {
	fd      int
	ifindex int
	mac     net.HardwareAddr
}

// ICMPv6 message types and NDP option types (RFC 4861).
const (
	icmp6NeighborSolicitation  = 135
	icmp6NeighborAdvertisement = 136
	ndpSourceLinkLayer         = 1
	ndpTargetLinkLayer         = 2
	ndpSolicited               = 0x40 // the S flag of an advertisement
)

// newNDPProber opens a raw ICMPv6 socket on the host's eth0. The kernel fills
// in the checksum of what such a socket sends, and picks the source address:
// the link-local one once its duplicate address detection is done, the
// host's 2001:db8:: address before.
func newNDPProber(h *Host) (*ndpProber, error) {
	p := &ndpProber{fd: -1, mac: h.MAC}
	err := inNetns(h.Netns, func() error {
		iface, err := net.InterfaceByName("eth0")
		if err != nil {
			return err
		}
		p.ifindex = iface.Index
		fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
		if err != nil {
			return err
		}
		p.fd = fd
		return p.configure()
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("NDP socket in %s: %v", h.Netns, err)
	}
	return p, nil
}

// configure has the socket send on eth0 with hop limit 255, which receivers
// of NDP messages require (RFC 4861: proof the message was not routed), and
// receive advertisements only, not every ICMPv6 message the host gets.
func (p *ndpProber) configure() error {
	for opt, v := range map[int]int{
		unix.IPV6_MULTICAST_HOPS: 255,
		unix.IPV6_UNICAST_HOPS:   255,
		unix.IPV6_MULTICAST_IF:   p.ifindex,
	} {
		if err := unix.SetsockoptInt(p.fd, unix.IPPROTO_IPV6, opt, v); err != nil {
			return err
		}
	}
	var filter unix.ICMPv6Filter // a set bit blocks its type
	for i := range filter.Data {
		filter.Data[i] = ^uint32(0)
	}
	filter.Data[icmp6NeighborAdvertisement>>5] &^= 1 << (icmp6NeighborAdvertisement & 31)
	return unix.SetsockoptICMPv6Filter(p.fd, unix.IPPROTO_ICMPV6, unix.ICMPV6_FILTER, &filter)
}

// Close closes the socket.
func (p *ndpProber) Close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}

// ask sends one Neighbor Solicitation for target and returns the link-layer
// addresses advertised for it within timeout: the first only, when first.
func (p *ndpProber) ask(target net.IP, timeout time.Duration, first bool) ([]net.HardwareAddr, error) {
	if len(target) != net.IPv6len || target.To4() != nil {
		return nil, fmt.Errorf("NDP is for IPv6 addresses, not %v", target)
	}
	ns := make([]byte, 0, 32)
	ns = append(ns, icmp6NeighborSolicitation, 0, 0, 0, 0, 0, 0, 0) // code, checksum, reserved
	ns = append(ns, target...)
	ns = append(ns, ndpSourceLinkLayer, 1) // its length in units of 8 bytes
	ns = append(ns, p.mac...)
	// To the target's solicited-node multicast group, which only the hosts
	// that may have it listen to: ff02::1:ff and its last 24 bits.
	to := &unix.SockaddrInet6{ZoneId: uint32(p.ifindex)}
	copy(to.Addr[:], []byte{0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	copy(to.Addr[13:], target[13:])
	buf := make([]byte, 1500)
	drain(p.fd, buf)
	if err := unix.Sendto(p.fd, ns, 0, to); err != nil {
		return nil, err
	}
	return collect(p.fd, buf, timeout, first, func(m []byte) net.HardwareAddr { return advertised(m, target) })
}

// advertised returns the target link-layer address of a solicited Neighbor
// Advertisement for target. Unsolicited ones, as a speaker multicasts when it
// takes an address over, answer no solicitation, as gratuitous ARP is no ARP
// reply. Whichever of the prober's addresses it came to does not matter.
func advertised(m []byte, target net.IP) net.HardwareAddr {
	if len(m) < 24 || m[0] != icmp6NeighborAdvertisement || m[1] != 0 || m[4]&ndpSolicited == 0 || !net.IP(m[8:24]).Equal(target) {
		return nil
	}
	for opts := m[24:]; len(opts) >= 8; {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			return nil // malformed: RFC 4861 has the whole message dropped
		}
		if opts[0] == ndpTargetLinkLayer {
			return net.HardwareAddr(append([]byte(nil), opts[2:8]...))
		}
		opts = opts[n:]
	}
	return nil
}
