package plan

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Reasons of what MetalLB's speakers and frr-k8s report failing in their
// announcing: told as the configuration's mistakes are, never Degraded.
const (
	ReasonPeerUnreachable  = "PeerUnreachable"
	ReasonInterfaceMissing = explain.ReasonInterfaceMissing
)

// SessionGrace is how long a BGPPeer's sessions may take to be established
// before none established is a finding: a reachable router's come up within
// seconds of the peer's creation.
const SessionGrace = 30 * time.Second

// AnnounceFailuresChecked is how many of the Services last found
// unannounced the module checks and tells: the same mistake fails every
// Service of a pool, and the sentences of a few say what to fix.
const AnnounceFailuresChecked = 5

// AnnounceRecheck is how soon the module looks again at a Service it found
// unannounced: whether some node announces it (MetalLB's ServiceL2Statuses)
// is read, not watched.
const AnnounceRecheck = 30 * time.Second

// Reports are what MetalLB's speakers and frr-k8s report of their
// announcing.
type Reports struct {
	// Sessions are frr-k8s's BGP sessions (its BGPSessionStates); none where
	// frr-k8s does not run: the native backend reports them only as
	// metrics.
	Sessions []Session
	// AnnounceFailures are the Services a speaker could not announce on the
	// interfaces an L2Advertisement names, one per Service.
	AnnounceFailures []AnnounceFailure
}

// Session is a node's BGP session with a peer.
type Session struct {
	Node string
	// Peer is the peer's address, as frr-k8s names it.
	Peer  string
	State string
	// Since is when frr-k8s first reported it.
	Since time.Time
}

// AnnounceFailure is a Service MetalLB's speaker could not announce: the
// last of its announceFailed Events.
type AnnounceFailure struct {
	Service    types.NamespacedName
	ServiceUID types.UID
	// Address and Node are the address and the node elected to announce it,
	// as the Event names them; empty where it does not.
	Address, Node string
	Message       string
	At            time.Time
	// Announced tells that a node announces it now (its ServiceL2Status),
	// Gone that the Service no longer exists (or is another of its name):
	// either ends the finding.
	Announced, Gone bool
}

// announceFailedWords are the address and the node in the message of MetalLB's
// announceFailed Event (speaker/layer2_controller.go).
var announceFailedWords = regexp.MustCompile(`LB IP "([^"]+)" doesn't exist in assigned node "([^"]+)"`)

// AnnounceFailuresOf are the last announceFailed Event of each Service among
// events, oldest first.
func AnnounceFailuresOf(events []corev1.Event) []AnnounceFailure {
	last := map[types.NamespacedName]AnnounceFailure{}
	for i := range events {
		ev := &events[i]
		if ev.Reason != explain.ReasonAnnounceFailed || ev.InvolvedObject.Kind != "Service" {
			continue
		}
		f := AnnounceFailure{Service: types.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name},
			ServiceUID: ev.InvolvedObject.UID, Message: strings.TrimSpace(ev.Message), At: status.EventLastSeen(ev)}
		if m := announceFailedWords.FindStringSubmatch(ev.Message); m != nil {
			f.Address, f.Node = m[1], m[2]
		}
		if seen, ok := last[f.Service]; !ok || !f.At.Before(seen.At) {
			last[f.Service] = f
		}
	}
	out := make([]AnnounceFailure, 0, len(last))
	for _, f := range last {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b AnnounceFailure) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Service.String(), b.Service.String())
	})
	return out
}

// reportMistakes are the peers no node has a session with and the Services
// no node could announce, and how soon to look again with no event: when a
// peer's grace ends, or while a Service is found unannounced.
func reportMistakes(r Reports, peers []Peer, ads []Advertisement, pools []Pool, now time.Time) ([]problem, time.Duration) {
	var out []problem
	var recheck time.Duration
	sooner := func(d time.Duration) {
		if d > 0 && (recheck == 0 || d < recheck) {
			recheck = d
		}
	}
	for _, p := range peers {
		problem, wait := peerUnreachable(p, r.Sessions, now)
		if problem != nil {
			out = append(out, *problem)
		}
		sooner(wait)
	}
	for _, f := range r.AnnounceFailures {
		if !f.Announced && !f.Gone {
			out = append(out, interfaceMissing(f, ads, pools))
			sooner(AnnounceRecheck)
		}
	}
	return out, recheck
}

// peerUnreachable is the finding of a peer whose sessions frr-k8s reports
// and none of them established, once the first of them is SessionGrace
// old; else how long until it is.
func peerUnreachable(p Peer, sessions []Session, now time.Time) (*problem, time.Duration) {
	var states []string
	var first time.Time
	for _, s := range sessions {
		if !explain.PeerIs(s.Peer, p.Address) {
			continue
		}
		if s.State == explain.SessionEstablished {
			return nil, 0
		}
		states = append(states, s.Node+" "+s.State)
		if first.IsZero() || s.Since.Before(first) {
			first = s.Since
		}
	}
	if len(states) == 0 {
		return nil, 0
	}
	if wait := first.Add(SessionGrace).Sub(now); wait > 0 {
		return nil, wait
	}
	slices.Sort(states)
	return &problem{regarding: p.Object, reason: ReasonPeerUnreachable, message: fmt.Sprintf(
		"BGPPeer %s/%s (%s, ASN %d) has no established session from any node (%s): no route reaches the router. Check the "+
			"peer's address and ASNs, that the router accepts the nodes as neighbours, and the path between them",
		p.Object.Namespace, p.Object.Name, p.Address, p.ASN, explain.FirstOf(states, 3))}, 0
}

// interfaceMissing is the finding of a Service no node announces because the
// node elected for it lacks the interfaces an L2Advertisement names: told on
// that advertisement where the module finds it, else on the Service.
func interfaceMissing(f AnnounceFailure, ads []Advertisement, pools []Pool) problem {
	fix := "Name in the L2Advertisement's spec.interfaces interfaces the nodes have, or leave spec.interfaces out"
	if ad := interfacesAdvertisement(f.Address, ads, pools); ad != nil {
		return problem{regarding: ad.Object, reason: ReasonInterfaceMissing, message: fmt.Sprintf(
			"Service %s is not announced: node %s, elected to announce %s, has none of the interfaces L2Advertisement %s/%s "+
				"names (%s). %s", f.Service, f.Node, f.Address, ad.Object.Namespace, ad.Object.Name, strings.Join(ad.Interfaces, ", "), fix)}
	}
	svc := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: f.Service.Namespace, Name: f.Service.Name}}
	svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	return problem{regarding: svc, reason: ReasonInterfaceMissing, message: fmt.Sprintf(
		"Service %s is not announced: %s. %s", f.Service, strings.TrimSuffix(f.Message, "."), fix)}
}

// interfacesAdvertisement is the first L2Advertisement naming interfaces
// that selects a pool holding address.
func interfacesAdvertisement(address string, ads []Advertisement, pools []Pool) *Advertisement {
	a, err := netip.ParseAddr(address)
	if err != nil {
		return nil
	}
	for i := range ads {
		ad := &ads[i]
		if ad.Object.Kind != manifests.L2AdvertisementKind.Kind || len(ad.Interfaces) == 0 {
			continue
		}
		for _, pool := range pools {
			if explain.SelectsPool(ad.Pools, ad.PoolSelectors, pool.Object.Name, pool.Object.Labels) &&
				slices.ContainsFunc(explain.RangesOf(pool.Addresses), func(r explain.Range) bool { return r.Contains(a) }) {
				return ad
			}
		}
	}
	return nil
}
