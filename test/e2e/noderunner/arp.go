package noderunner

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// arpProber asks, from a host's eth0, who has an address, as arping does.
type arpProber struct {
	fd      int
	ifindex int
	mac     net.HardwareAddr
	ip      net.IP
}

const ethPArp = 0x0806

// newARPProber opens a raw socket on the host's eth0.
func newARPProber(h *Host) (*arpProber, error) {
	p := &arpProber{fd: -1, mac: h.MAC, ip: h.IP.To4()}
	err := inNetns(h.Netns, func() error {
		iface, err := net.InterfaceByName("eth0")
		if err != nil {
			return err
		}
		p.ifindex = iface.Index
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(ethPArp)))
		if err != nil {
			return err
		}
		p.fd = fd
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(ethPArp), Ifindex: iface.Index})
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("ARP socket in %s: %v", h.Netns, err)
	}
	return p, nil
}

// Close closes the socket.
func (p *arpProber) Close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}

// ask sends one ARP request for target and returns the hardware addresses
// that replied within timeout: the first only, when first.
func (p *arpProber) ask(target net.IP, timeout time.Duration, first bool) ([]net.HardwareAddr, error) {
	target = target.To4()
	broadcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	frame := make([]byte, 0, 42)
	frame = append(frame, broadcast...)
	frame = append(frame, p.mac...)
	frame = binary.BigEndian.AppendUint16(frame, ethPArp)
	frame = append(frame, 0, 1, 8, 0, 6, 4, 0, 1) // Ethernet, IPv4, sizes, request
	frame = append(frame, p.mac...)
	frame = append(frame, p.ip...)
	frame = append(frame, 0, 0, 0, 0, 0, 0)
	frame = append(frame, target...)
	to := &unix.SockaddrLinklayer{Protocol: htons(ethPArp), Ifindex: p.ifindex, Halen: 6}
	copy(to.Addr[:], broadcast)
	buf := make([]byte, 1500)
	drain(p.fd, buf)
	if err := unix.Sendto(p.fd, frame, 0, to); err != nil {
		return nil, err
	}
	return collect(p.fd, buf, timeout, first, func(f []byte) net.HardwareAddr { return p.reply(f, target) })
}

// reply returns the sender of an ARP reply from target to this prober.
func (p *arpProber) reply(f []byte, target net.IP) net.HardwareAddr {
	if len(f) < 42 || binary.BigEndian.Uint16(f[12:14]) != ethPArp {
		return nil
	}
	arp := f[14:]
	if binary.BigEndian.Uint16(arp[6:8]) != 2 || !net.IP(arp[14:18]).Equal(target) || !net.IP(arp[24:28]).Equal(p.ip) {
		return nil
	}
	return net.HardwareAddr(append([]byte(nil), arp[8:14]...))
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
