package main

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
)

// status writes what status tells of the installation.
func (p *printer) status(r explain.Report) {
	p.line("MetalLB in %s", r.Namespace)
	if r.OperatorVersion != "" {
		p.field("Operator", r.OperatorVersion)
	}
	version := r.MetalLBVersion
	if version == "" {
		version = "<not running>"
	}
	if r.Backend != "" {
		version += " (BGP backend " + r.Backend + ")"
	}
	p.field("MetalLB", version)
	for _, c := range r.Conditions {
		p.field(c.Type, p.condition(c))
	}
	p.field("Controller", r.Controller)
	p.speakers(r.Speakers)
	p.pools(r.Pools)
	p.advertisements(r.Advertisements)
	p.peers(r.Peers)
	if len(r.Maintenance) > 0 {
		p.line("Maintenance")
		for _, m := range r.Maintenance {
			p.line("  %s\t%s\t%s", m.Node, p.paint(warn, string(m.State)), m.Reason)
		}
	}
	if len(r.Findings) > 0 {
		p.line("Findings")
		for _, f := range r.Findings {
			p.line("  %s\t%s", p.paint(bad, f.Reason), explain.Sentence(f.Message))
		}
	}
	if len(r.CouldNotRead) > 0 {
		p.line("Could not read")
		for _, u := range r.CouldNotRead {
			p.line("  %s\t%s", p.paint(warn, u.What), u.Reason)
		}
	}
}

// condition words a condition, with its message where it is not healthy.
func (p *printer) condition(c metav1.Condition) string {
	healthy := (c.Type == "Available" || c.Type == "Upgradeable") == (c.Status == metav1.ConditionTrue)
	s := fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	if healthy {
		return p.paint(good, s)
	}
	return p.paint(bad, s) + " " + c.Message
}

func (p *printer) speakers(speakers []explain.SpeakerReport) {
	if len(speakers) == 0 {
		p.field("Speakers", "<none>")
		return
	}
	p.line("Speakers")
	p.line("  NODE\tSPEAKER\tANNOUNCES")
	for _, s := range speakers {
		ready, announces := p.paint(good, "ready"), p.paint(good, "yes")
		if !s.Ready {
			ready, announces = p.paint(bad, "not ready"), p.paint(bad, "no")
		}
		if s.Excluded {
			announces = p.paint(warn, "no: excluded from load balancers")
		}
		p.line("  %s\t%s\t%s", s.Node, ready, announces)
	}
}

func (p *printer) pools(pools []explain.PoolReport) {
	p.line("Pools")
	if len(pools) == 0 {
		p.line("  <none>")
		return
	}
	p.line("  NAME\tADDRESSES\tIPV4 USED/FREE\tIPV6 USED/FREE\tAUTO-ASSIGN")
	for _, pl := range pools {
		p.line("  %s\t%s\t%s\t%s\t%t", pl.Name, strings.Join(pl.Addresses, ","), p.usage(pl.UsedIPv4, pl.FreeIPv4),
			p.usage(pl.UsedIPv6, pl.FreeIPv6), pl.AutoAssign)
	}
}

// usage words a family's addresses used and free, red when used up.
func (p *printer) usage(used, free int64) string {
	s := fmt.Sprintf("%d/%d", used, free)
	if free == 0 && used > 0 {
		return p.paint(bad, s)
	}
	return s
}

func (p *printer) advertisements(ads []explain.AdvertisementReport) {
	p.line("Advertisements")
	if len(ads) == 0 {
		p.line("  <none>")
		return
	}
	p.line("  KIND\tNAME\tPOOLS\tNODES\tINTERFACES/PEERS")
	for _, a := range ads {
		via := a.Interfaces
		if a.Kind == "BGPAdvertisement" {
			via = a.Peers
		}
		pools := orNone(a.Pools)
		if len(a.Pools) == 0 {
			pools = p.paint(bad, pools)
		}
		p.line("  %s\t%s\t%s\t%s\t%s", a.Kind, a.Name, pools, orNone(a.Nodes), orAll(via))
	}
}

func orAll(items []string) string {
	if len(items) == 0 {
		return "all"
	}
	return strings.Join(items, ", ")
}

func (p *printer) peers(peers []explain.PeerReport) {
	if len(peers) == 0 {
		return
	}
	p.line("Peers")
	p.line("  NAME\tADDRESS\tASN\tBFD\tNODES\tSESSIONS")
	for _, pr := range peers {
		bfd := pr.BFDProfile
		if bfd == "" {
			bfd = "-"
		}
		p.line("  %s\t%s\t%d\t%s\t%s\t%s", pr.Name, pr.Address, pr.ASN, bfd, orNone(pr.Nodes), p.sessions(pr.Sessions))
	}
}

// sessions words a peer's sessions, node by node.
func (p *printer) sessions(sessions []explain.SessionReport) string {
	if len(sessions) == 0 {
		return "not reported (the native backend reports them as metrics only)"
	}
	var out []string
	for _, s := range sessions {
		state := p.paint(good, s.BGP)
		if s.BGP != "Established" {
			state = p.paint(bad, s.BGP)
		}
		if s.BFD != "" {
			state += ", BFD " + s.BFD
		}
		out = append(out, s.Node+" "+state)
	}
	return strings.Join(out, "; ")
}
