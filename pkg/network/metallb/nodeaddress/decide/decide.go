package decide

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Port is a protocol and port a Service takes on each of its addresses.
type Port struct {
	Protocol corev1.Protocol
	Port     int32
}

// Key is the port as the mode's cache indexes Services by it: "TCP/80".
func (p Port) Key() string { return fmt.Sprintf("%s/%d", p.Protocol, p.Port) }

// Rival is another Service the mode serves, with addresses of its: for
// Addresses those it holds, for AddressesAmong those it would publish with no rival.
type Rival struct {
	Service   *corev1.Service
	Addresses []netip.Addr
}

// Loss is an address a Service does not get: an older Service, Winner,
// publishes it and takes Ports on it too.
type Loss struct {
	Address netip.Addr
	Ports   []Port
	Winner  types.NamespacedName
}

// Decision is a Service's addresses, in the order published, and its losses.
type Decision struct {
	Addresses []netip.Addr
	Losses    []Loss
}

// Published returns the addresses a Service would publish with no rival: those
// of its nodes (nodesFor), family by family in the order of its ipFamilies.
func Published(svc *corev1.Service, eligible []Node, endpointNodes map[string]bool) []netip.Addr {
	families := svc.Spec.IPFamilies
	if len(families) == 0 {
		families = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	nodes := nodesFor(svc, eligible, endpointNodes)
	var out []netip.Addr
	for _, f := range families {
		for _, n := range nodes {
			for _, a := range n.Addresses {
				if a.Is4() == (f == corev1.IPv4Protocol) {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// AddressesAmong works out a Service's decision among the older Services that
// share a port with it or, in turn, with one of them (rivals, with what each
// would publish): each rival's own decision first, oldest first, so that an
// address is lost only to a Service that holds it, not to one that itself
// lost it to an older one.
func AddressesAmong(svc *corev1.Service, wanted []netip.Addr, rivals []Rival) Decision {
	decided := map[types.UID]Decision{}
	var decide func(*corev1.Service, []netip.Addr) Decision
	decide = func(s *corev1.Service, wanted []netip.Addr) Decision {
		if d, ok := decided[s.UID]; ok {
			return d
		}
		var holders []Rival
		for _, r := range rivals {
			// Only older ones: the recursion ends with the oldest.
			if Older(r.Service, s) && len(sharedPorts(PortsOf(s), PortsOf(r.Service))) > 0 {
				holders = append(holders, Rival{Service: r.Service, Addresses: decide(r.Service, r.Addresses).Addresses})
			}
		}
		d := Addresses(s, wanted, holders)
		decided[s.UID] = d
		return d
	}
	return decide(svc, wanted)
}

// Addresses works out a Service's addresses of those it wants: an address that an
// older rival holds with one of the same ports is the rival's, all of
// the Service's ports on it alike, since kube-proxy forwards every port of a
// Service on each of its addresses. The older is the one created first, then
// the one with the lesser UID, so both Services agree on it.
func Addresses(svc *corev1.Service, wanted []netip.Addr, rivals []Rival) Decision {
	var d Decision
	ports := PortsOf(svc)
	for _, a := range wanted {
		if loss, lost := lossOf(svc, a, ports, rivals); lost {
			d.Losses = append(d.Losses, loss)
			continue
		}
		d.Addresses = append(d.Addresses, a)
	}
	return d
}

// lossOf finds the oldest rival, older than the Service, that holds the
// address with a port of the Service's.
func lossOf(svc *corev1.Service, a netip.Addr, ports []Port, rivals []Rival) (Loss, bool) {
	var best *Loss
	var winner *corev1.Service
	for _, r := range rivals {
		if !Older(r.Service, svc) || !slices.Contains(r.Addresses, a) || (winner != nil && !Older(r.Service, winner)) {
			continue
		}
		shared := sharedPorts(ports, PortsOf(r.Service))
		if len(shared) == 0 {
			continue
		}
		winner = r.Service
		best = &Loss{Address: a, Ports: shared, Winner: types.NamespacedName{Namespace: r.Service.Namespace, Name: r.Service.Name}}
	}
	if best == nil {
		return Loss{}, false
	}
	return *best, true
}

// older tells whether a was created before b, the lesser UID first at the
// same second.
func Older(a, b *corev1.Service) bool {
	if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
		return c < 0
	}
	return a.UID < b.UID
}

func PortsOf(svc *corev1.Service) []Port {
	out := make([]Port, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		out = append(out, Port{Protocol: cmp.Or(p.Protocol, corev1.ProtocolTCP), Port: p.Port})
	}
	return out
}

func sharedPorts(a, b []Port) []Port {
	var out []Port
	for _, p := range a {
		if slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}
