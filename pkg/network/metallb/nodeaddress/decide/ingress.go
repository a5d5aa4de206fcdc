package decide

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// A Service in the mode's cache carries, in place of its status, a mark that
// NextWrite reads: the Digest of its ingress when the mode owns it, or the
// field manager that wrote its addresses when that is not the mode. The mark
// is the GenerateName of the cache's copy (MarkWritten, MarkWriter), never of
// the Service itself, whose GenerateName the copy does not keep: a string,
// where an annotation's map cost 320 bytes a Service (3.2 MB at 10,000).
const (
	writtenMark = "written:"
	writerMark  = "writer:"
)

// Mark is the mark of svc, a copy in the mode's cache: "" when none.
func Mark(svc *corev1.Service) string { return svc.GenerateName }

// MarkWritten marks svc, a copy in the mode's cache, as holding the ingress
// the mode wrote.
func MarkWritten(svc *corev1.Service, ingress []corev1.LoadBalancerIngress) {
	svc.GenerateName = writtenMark + Digest(ingress)
}

// MarkWriter marks svc, a copy in the mode's cache, as holding addresses
// another field manager wrote.
func MarkWriter(svc *corev1.Service, manager string) {
	svc.GenerateName = writerMark + manager
}

// PortTaken is the error a port of the Service carries in its status where
// another Service took it: the Warning Event names that Service.
const PortTaken = "networkoperator.openshift.io/PortTaken"

// Ingress is the Service's status.loadBalancer.ingress for a decision: one
// entry per address, ipMode VIP (kube-proxy forwards it on the node). Lost
// ports are listed, with their error, in one more entry that has no address,
// so that kube-proxy, which skips such entries, forwards nothing for them.
func Ingress(d Decision) []corev1.LoadBalancerIngress {
	var out []corev1.LoadBalancerIngress
	for _, a := range d.Addresses {
		out = append(out, corev1.LoadBalancerIngress{IP: a.String(), IPMode: new(corev1.LoadBalancerIPModeVIP)})
	}
	var lost []Port
	for _, l := range d.Losses {
		for _, p := range l.Ports {
			if !slices.Contains(lost, p) {
				lost = append(lost, p)
			}
		}
	}
	if len(lost) == 0 {
		return out
	}
	entry := corev1.LoadBalancerIngress{}
	for _, p := range lost {
		entry.Ports = append(entry.Ports, corev1.PortStatus{Port: p.Port, Protocol: p.Protocol, Error: new(PortTaken)})
	}
	return append(out, entry)
}

// NextWrite tells whether to write the ingress into the Service's status: not
// when the mode wrote it already, nor, for a Service with no class, when
// another controller wrote addresses there (writer): that one serves it, and
// the two would overwrite each other without end. A Service of the mode's
// class is its own whoever wrote it.
func NextWrite(svc *corev1.Service, ingress []corev1.LoadBalancerIngress) (write bool, writer string) {
	digest, ours := strings.CutPrefix(Mark(svc), writtenMark)
	other, byOther := strings.CutPrefix(Mark(svc), writerMark)
	switch {
	case ours:
		return len(ingress) == 0 || digest != Digest(ingress), ""
	case len(ingress) == 0:
		return false, ""
	case svc.Spec.LoadBalancerClass == nil && byOther:
		return false, other
	}
	return true, ""
}

// Digest identifies an ingress list, to compare what is written with what is
// wanted without keeping every Service's status in memory.
func Digest(ingress []corev1.LoadBalancerIngress) string {
	b, _ := json.Marshal(ingress) // plain structs: cannot fail
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}
