package noderunner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// RouterAddress is the BGP router's address on the test network.
const RouterAddress = "192.0.2.3"

// FRR's daemons, from Debian's frr package.
const (
	frrDaemons = "/usr/lib/frr"
	// frrUser is the user FRR's daemons run as: they refuse to run as root,
	// which is not in FRR's vty group.
	frrUser = "frr"
)

// Router is a BGP router on the test network: FRR's zebra and bgpd in a
// namespace of their own. It takes a BGP session from any address of the test
// network, as a peer of PeerASN, and keeps every path it learns.
type Router struct {
	Host *Host
	dir  string
	vty  *vty
	// daemons are zebra and bgpd, in start order.
	daemons []*exec.Cmd
}

// RouterConfig is the router's side of the sessions.
type RouterConfig struct {
	ASN, PeerASN uint32
	// BFD runs FRR's bfdd too, and BFD on every session with the profile
	// BFDProfile (100 ms intervals, 3 missed: a peer's failure found in 0.3 s).
	BFD bool
}

// BFDProfile is the router's BFD profile, and the one the BFD story gives the
// nodes: the same timers on both sides.
const BFDProfile = "fast"

// bfddConf is bfdd's configuration, with BFDProfile.
const bfddConf = `frr defaults traditional
hostname router
log file %[1]s/bfdd.log
bfd
 profile ` + BFDProfile + `
  receive-interval 100
  transmit-interval 100
  detect-multiplier 3
`

// bgpdBFD turns BFD on for the router's sessions.
const bgpdBFD = " neighbor nodes bfd profile " + BFDProfile + "\n"

// bgpdConf is bgpd's configuration: sessions from the whole test network,
// eBGP without policies (the nodes' routes are all accepted), and several
// paths kept for a prefix, one per node that announces it.
const bgpdConf = `frr defaults traditional
hostname router
log file %[1]s/bgpd.log
router bgp %[2]d
 bgp router-id %[3]s
 no bgp ebgp-requires-policy
 neighbor nodes peer-group
 neighbor nodes remote-as %[4]d
 bgp listen range %[5]s peer-group nodes
%[6]s address-family ipv4 unicast
  maximum-paths 16
 exit-address-family
`

// StartRouter starts the router in a namespace of its own on the bridge, and
// waits until bgpd answers. Its files are in a folder of their own in the
// system's temporary folder, where FRR's user can reach them.
func (n *Network) StartRouter(config RouterConfig) (_ *Router, err error) {
	dir, err := os.MkdirTemp("", prefix+"router-")
	if err != nil {
		return nil, err
	}
	h, err := addHost("router", prefix+"r", RouterAddress, "")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Router{Host: h, dir: dir, vty: &vty{dir: dir}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	daemons, bfd := []string{"zebra", "bgpd"}, ""
	if config.BFD {
		daemons, bfd = []string{"zebra", "bfdd", "bgpd"}, bgpdBFD
		if err := os.WriteFile(filepath.Join(dir, "bfdd.conf"), fmt.Appendf(nil, bfddConf, dir), 0o644); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf(bgpdConf, dir, config.ASN, RouterAddress, config.PeerASN, testNetwork, bfd)
	if err := os.WriteFile(filepath.Join(dir, "bgpd.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "zebra.conf"), nil, 0o644); err != nil {
		return nil, err
	}
	if err := chownToFRR(dir); err != nil {
		return nil, err
	}
	for _, daemon := range daemons {
		if err := r.start(daemon); err != nil {
			return nil, err
		}
	}
	return r, r.waitReady(10 * time.Second)
}

// testNetwork is the nodes' network, from which the router takes sessions.
const testNetwork = "192.0.2.0/24"

// start starts one of FRR's daemons in the router's namespace, its sockets,
// pid file and configuration in the router's folder.
func (r *Router) start(daemon string) error {
	d := r.dir
	args := []string{"netns", "exec", r.Host.Netns, filepath.Join(frrDaemons, daemon),
		"-u", frrUser, "-g", frrUser, "-z", filepath.Join(d, "zserv.api"), "--vty_socket", d,
		"-i", filepath.Join(d, daemon+".pid"), "-f", filepath.Join(d, daemon+".conf")}
	if daemon == "bfdd" { // its control socket, where bgpd finds it, is the router's too
		args = append(args, "--bfdctl", filepath.Join(d, "bfdd.sock"))
	}
	cmd := exec.Command("ip", args...)
	out, err := os.Create(filepath.Join(d, daemon+".out"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting FRR's %s: %w", daemon, err)
	}
	r.daemons = append(r.daemons, cmd)
	return nil
}

func (r *Router) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		_, err := r.vty.ask(ctx, "bgpd", "show bgp summary json")
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			bgpd, _ := os.ReadFile(filepath.Join(r.dir, "bgpd.out"))
			return fmt.Errorf("FRR's bgpd did not answer within %s: %v; it printed: %s", timeout, err, bgpd)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the daemons, bgpd first, and removes the namespace and the
// router's files.
func (r *Router) Close() {
	r.vty.close()
	for i := len(r.daemons) - 1; i >= 0; i-- {
		_ = r.daemons[i].Process.Signal(syscall.SIGTERM)
		_ = r.daemons[i].Wait()
	}
	_ = ip("link", "del", r.Host.veth)
	_ = ip("netns", "del", r.Host.Netns)
	_ = os.RemoveAll(r.dir)
}

// StopBGP stops bgpd, as a router that goes down does: it closes its
// sessions. StartBGP starts it again.
func (r *Router) StopBGP() error {
	last := len(r.daemons) - 1
	if last < 0 || filepath.Base(r.daemons[last].Args[4]) != "bgpd" {
		return fmt.Errorf("bgpd is not running")
	}
	r.vty.close()
	_ = r.daemons[last].Process.Signal(syscall.SIGTERM)
	_ = r.daemons[last].Wait()
	r.daemons = r.daemons[:last]
	return nil
}

// StartBGP starts bgpd again, after StopBGP, and waits until it answers.
func (r *Router) StartBGP() error {
	if err := r.start("bgpd"); err != nil {
		return err
	}
	return r.waitReady(10 * time.Second)
}

// NextHops returns, for each prefix the router has a valid path to, the next
// hops of those paths, as bgpd's table says (show bgp ipv4 unicast json).
func (r *Router) NextHops(ctx context.Context) (map[string][]net.IP, error) {
	out, err := r.vty.ask(ctx, "bgpd", "show bgp ipv4 unicast json")
	if err != nil {
		return nil, err
	}
	var table struct {
		Routes map[string][]struct {
			Valid    bool `json:"valid"`
			Nexthops []struct {
				IP string `json:"ip"`
			} `json:"nexthops"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(out, &table); err != nil {
		return nil, fmt.Errorf("reading bgpd's table: %w: %s", err, out)
	}
	hops := map[string][]net.IP{}
	for prefix, paths := range table.Routes {
		for _, p := range paths {
			for _, h := range p.Nexthops {
				if p.Valid {
					hops[prefix] = append(hops[prefix], net.ParseIP(h.IP))
				}
			}
		}
	}
	return hops, nil
}

// Established counts the BGP sessions the router has established.
func (r *Router) Established(ctx context.Context) (int, error) {
	out, err := r.vty.ask(ctx, "bgpd", "show bgp summary json")
	if err != nil {
		return 0, err
	}
	var summary struct {
		IPv4Unicast struct {
			Peers map[string]struct {
				State string `json:"state"`
			} `json:"peers"`
		} `json:"ipv4Unicast"`
	}
	if err := json.Unmarshal(out, &summary); err != nil {
		return 0, fmt.Errorf("reading bgpd's summary: %w: %s", err, out)
	}
	n := 0
	for _, p := range summary.IPv4Unicast.Peers {
		if p.State == "Established" {
			n++
		}
	}
	return n, nil
}

// BFDUp counts the router's BFD sessions that are up.
func (r *Router) BFDUp(ctx context.Context) (int, error) {
	out, err := r.vty.ask(ctx, "bfdd", "show bfd peers json")
	if err != nil {
		return 0, err
	}
	var peers []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &peers); err != nil {
		return 0, fmt.Errorf("reading bfdd's peers: %w: %s", err, out)
	}
	n := 0
	for _, p := range peers {
		if p.Status == "up" {
			n++
		}
	}
	return n, nil
}

// Log returns what bgpd logged.
func (r *Router) Log() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "bgpd.log"))
	return string(b)
}

// chownToFRR gives FRR's user the router's folder, where its daemons write.
func chownToFRR(dir string) error {
	u, err := user.Lookup(frrUser)
	if err != nil {
		return fmt.Errorf("FRR's user: %w (is Debian's frr package installed? make debian-packages)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}
