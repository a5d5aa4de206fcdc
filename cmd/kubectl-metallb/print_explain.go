package main

import (
	"fmt"
	"strings"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
)

// explanation writes what explain tells of a Service.
func (p *printer) explanation(e explain.Explanation) {
	p.line("Service %s", e.Service)
	state := string(e.State)
	switch {
	case e.State == explain.Announced:
		state = p.paint(good, state)
	case e.Reason != "":
		state = p.paint(bad, state) + " (" + e.Reason + ")"
	}
	p.field("State", state)
	address := orNone(e.Addresses)
	if e.Pool != "" {
		address += " (pool " + e.Pool + ")"
	}
	p.field("Address", address)
	for i, a := range e.AnnouncedBy {
		label := ""
		if i == 0 {
			label = "Announced"
		}
		p.line("  %s\t%s", label+colon(label), announcer(a))
	}
	if e.Why != "" {
		p.field("Why", e.Why)
		p.field("Fix", e.Fix)
	}
	if e.LastWarning != "" {
		p.field("Last Warning", e.LastWarning)
	}
	p.unread(e.CouldNotRead)
}

func colon(label string) string {
	if label == "" {
		return ""
	}
	return ":"
}

// announcer words a node's announcement.
func announcer(a explain.Announcer) string {
	if a.Protocol == explain.ProtocolBGP {
		peers := "BGPPeer "
		if len(a.Peers) != 1 {
			peers = "BGPPeers "
		}
		return fmt.Sprintf("BGP from %s to %s%s", a.Node, peers, orNone(a.Peers))
	}
	s := "layer 2 from " + a.Node
	if len(a.Interfaces) > 0 {
		s += " (interfaces " + strings.Join(a.Interfaces, ", ") + ")"
	}
	return s
}

// unread says what could not be read, the kinds grouped by why.
func (p *printer) unread(unread []explain.Unread) {
	var reasons []string
	by := map[string][]string{}
	for _, u := range unread {
		if by[u.Reason] == nil {
			reasons = append(reasons, u.Reason)
		}
		by[u.Reason] = append(by[u.Reason], u.What)
	}
	for i, r := range reasons {
		label := ""
		if i == 0 {
			label = "Could not read:"
		}
		p.line("  %s\t%s", label, p.paint(warn, strings.Join(by[r], ", ")+": "+r))
	}
}
