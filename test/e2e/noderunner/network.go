package noderunner

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The test network: one bridge in the host's namespace, the nodes and a client
// on it in 192.0.2.0/24 (TEST-NET-1), the pods that are not on their node's
// network in 198.51.100.0/24 (TEST-NET-2). The host holds the first address of
// each, so kube-apiserver, listening on HostAddress, is reachable from all.
// The bridge and the hosts in 192.0.2.0/24 also have an address in
// 2001:db8::/64, which ends in the decimal digits of their IPv4 address's
// last byte.
const (
	// HostAddress is the host's address on the bridge, for kube-apiserver.
	HostAddress = "192.0.2.1"
	// ClientAddress is the client's address, from which tests probe.
	ClientAddress = "192.0.2.2"
	// HostAddress6 and ClientAddress6 are their IPv6 addresses.
	HostAddress6   = "2001:db8::1"
	ClientAddress6 = "2001:db8::2"
	prefix6        = "2001:db8::"
	podGateway     = "198.51.100.1"
	podFirst       = 10 // pod addresses start at 198.51.100.10
	bridge         = "cnoe2e-br"
	// prefix starts every name this package gives a link, so that what a killed
	// run left behind can be found and removed; a namespace's name also has its
	// world's (netnsName).
	prefix = "cnoe2e-"
)

// Host is a network namespace on the bridge.
type Host struct {
	Netns string
	IP    net.IP
	IP6   net.IP // nil for a pod
	MAC   net.HardwareAddr
	veth  string // its end in the host's namespace
}

// Network is the bridge and the hosts on it.
type Network struct {
	Client *Host
	nodes  map[string]*Host
	lock   *os.File

	mu   sync.Mutex
	pods map[int]*Host // by the last byte of the address, minus podFirst
	// via is each pod's node, once pods route through their nodes.
	via map[*Host]*Host
}

// NewNetwork creates the bridge, a namespace per node addressed with its
// InternalIP, and the client. Only one test network of a world (World) exists
// on a machine at a time: a second waits for the first to be closed.
func NewNetwork(nodes map[string]string) (_ *Network, err error) {
	if os.Geteuid() != 0 {
		return nil, errNotRoot
	}
	if err := isolated(); err != nil {
		return nil, err
	}
	lock, err := lockNetwork()
	if err != nil {
		return nil, err
	}
	n := &Network{nodes: map[string]*Host{}, lock: lock, pods: map[int]*Host{}}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	removeLeftovers()
	if err := ip("link", "add", bridge, "type", "bridge"); err != nil {
		return nil, err
	}
	for _, cmd := range [][]string{
		{"addr", "add", HostAddress + "/24", "dev", bridge},
		{"addr", "add", podGateway + "/24", "dev", bridge},
		{"addr", "add", HostAddress6 + "/64", "dev", bridge, "nodad"},
		{"link", "set", bridge, "up"},
	} {
		if err := ip(cmd...); err != nil {
			return nil, err
		}
	}
	i := 0
	for name, addr := range nodes {
		h, err := addHost(name, fmt.Sprintf("%sn%d", prefix, i), addr, "")
		if err != nil {
			return nil, err
		}
		n.nodes[name] = h
		i++
	}
	if n.Client, err = addHost("client", prefix+"c", ClientAddress, ""); err != nil {
		return nil, err
	}
	return n, nil
}

var errNotRoot = errors.New("network namespaces need root: run the tests as root (CI does)")

// Node returns the host of a node, nil if it has none.
func (n *Network) Node(name string) *Host { return n.nodes[name] }

// Disconnect cuts a node off the network, as when it loses power: its link
// to the bridge goes down, and nothing it sends, a TCP connection's close
// included, reaches anyone.
func (n *Network) Disconnect(node string) error {
	h := n.nodes[node]
	if h == nil {
		return fmt.Errorf("no node %s on the test network", node)
	}
	return ip("link", "set", h.veth, "down")
}

// Close removes every namespace and link it made.
func (n *Network) Close() {
	removeLeftovers()
	if n.lock != nil {
		n.lock.Close()
	}
}

// RoutePodsThroughNodes has the pods made from now on route through their
// node, as a CNI's do, so that kube-proxy on the node sees both ways of what
// it forwards to a pod: a pod's default route is its node, and the host
// reaches it through its node; the nodes forward IPv4.
func (n *Network) RoutePodsThroughNodes() error {
	for name, h := range n.nodes {
		err := inNetns(h.Netns, func() error { return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644) })
		if err != nil {
			return fmt.Errorf("forwarding on node %s: %w", name, err)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.via = map[*Host]*Host{}
	return nil
}

// addPod makes a namespace for a pod of a node with its own address.
func (n *Network) addPod(node *Host) (*Host, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := 0
	for n.pods[i] != nil {
		i++
	}
	if podFirst+i > 250 {
		return nil, fmt.Errorf("no pod address left")
	}
	addr, gateway := fmt.Sprintf("198.51.100.%d", podFirst+i), podGateway
	if n.via != nil {
		gateway = ""
	}
	h, err := addHost(fmt.Sprintf("pod%d", i), fmt.Sprintf("%sp%d", prefix, i), addr, gateway)
	if err != nil {
		return nil, err
	}
	n.pods[i] = h
	if n.via != nil {
		n.via[h] = node
		return h, n.routeThrough(h, node)
	}
	return h, nil
}

// routeThrough routes a pod's traffic, both ways, through its node: the pod's
// default route is its node, which reaches it on the bridge, and the host and
// the other nodes reach it through its node, as a CNI's routes do.
func (n *Network) routeThrough(pod, node *Host) error {
	nodeIP, podIP := node.IP.String(), pod.IP.String()
	cmds := [][]string{
		{"-n", pod.Netns, "route", "add", nodeIP, "dev", "eth0"},
		{"-n", pod.Netns, "route", "add", "default", "via", nodeIP},
		{"route", "replace", podIP + "/32", "via", nodeIP},
	}
	for _, other := range n.nodes {
		if other == node {
			cmds = append(cmds, []string{"-n", other.Netns, "route", "replace", podIP + "/32", "dev", "eth0"})
		} else {
			cmds = append(cmds, []string{"-n", other.Netns, "route", "replace", podIP + "/32", "via", nodeIP})
		}
	}
	for _, cmd := range cmds {
		if err := ip(cmd...); err != nil {
			return err
		}
	}
	return nil
}

// removePod removes a pod's namespace, and its routes.
func (n *Network) removePod(h *Host) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, p := range n.pods {
		if p == h {
			delete(n.pods, i)
		}
	}
	if n.via[h] != nil {
		_ = ip("route", "del", h.IP.String()+"/32")
		for _, node := range n.nodes {
			_ = ip("-n", node.Netns, "route", "del", h.IP.String()+"/32")
		}
		delete(n.via, h)
	}
	_ = ip("link", "del", h.veth)
	_ = ip("netns", "del", h.Netns)
}

// addHost makes a namespace for a host (netnsName(name)) whose eth0 is a veth
// to the bridge, with addr and, on the nodes' network, its IPv6 address. The
// name eth0 matters: MetalLB's speaker never announces on interfaces named veth*.
func addHost(name, veth, addr, gateway string) (*Host, error) {
	netns, addr6 := netnsName(name), address6(addr)
	cmds := [][]string{
		{"netns", "add", netns},
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns},
		{"link", "set", veth, "master", bridge, "up"},
		{"-n", netns, "addr", "add", addr + "/24", "dev", "eth0"},
		{"-n", netns, "link", "set", "eth0", "up"},
		{"-n", netns, "link", "set", "lo", "up"},
	}
	if addr6 != "" {
		// nodad: usable at once, not after a second of duplicate address detection.
		cmds = append(cmds, []string{"-n", netns, "addr", "add", addr6 + "/64", "dev", "eth0", "nodad"})
	}
	if gateway != "" {
		cmds = append(cmds, []string{"-n", netns, "route", "add", "default", "via", gateway})
	}
	for _, cmd := range cmds {
		if err := ip(cmd...); err != nil {
			return nil, err
		}
	}
	h := &Host{Netns: netns, IP: net.ParseIP(addr), IP6: net.ParseIP(addr6), veth: veth}
	err := inNetns(netns, func() error {
		iface, err := net.InterfaceByName("eth0")
		if err == nil {
			h.MAC = iface.HardwareAddr
		}
		return err
	})
	return h, err
}

// address6 is the IPv6 address of a host on the nodes' network, HostAddress's
// /24: 192.0.2.10 has 2001:db8::10, its last byte's decimal digits read as
// hexadecimal, which any byte's are. Empty for other addresses, the pods'.
func address6(addr string) string {
	v4 := net.ParseIP(addr).To4()
	if v4 == nil || !v4.Mask(net.CIDRMask(24, 32)).Equal(net.ParseIP(HostAddress).Mask(net.CIDRMask(24, 32))) {
		return ""
	}
	return prefix6 + strconv.Itoa(int(v4[3]))
}

// removeLeftovers deletes every namespace of this world and every link named
// with the prefix (the links are this world's: it has a network namespace of
// its own).
func removeLeftovers() {
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), netnsName("")) {
			_ = ip("netns", "del", e.Name())
		}
	}
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		if strings.HasPrefix(i.Name, prefix) {
			_ = ip("link", "del", i.Name)
		}
	}
}

// lockNetwork takes the machine-wide lock on the names of this world's
// test network.
func lockNetwork() (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), netnsName("network.lock")), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
