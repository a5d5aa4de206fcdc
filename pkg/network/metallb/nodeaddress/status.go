package nodeaddress

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

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

// nextWrite tells whether to write the ingress into the Service's status: not
// when the mode wrote it already, nor, for a Service with no class, when
// another controller wrote addresses there (writer): that one serves it, and
// the two would overwrite each other without end. A Service of the mode's
// class is its own whoever wrote it.
func nextWrite(svc *corev1.Service, ingress []corev1.LoadBalancerIngress) (write bool, writer string) {
	digest, ours := svc.Annotations[writtenAnnotation]
	switch {
	case ours:
		return len(ingress) == 0 || digest != Digest(ingress), ""
	case len(ingress) == 0:
		return false, ""
	case svc.Spec.LoadBalancerClass == nil && svc.Annotations[writerAnnotation] != "":
		return false, svc.Annotations[writerAnnotation]
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

// statusApply is the apply configuration of a Service's status with the
// ingress; with none, it holds no field, and applying it removes what the
// mode wrote.
func statusApply(svc *corev1.Service, ingress []corev1.LoadBalancerIngress) *corev1ac.ServiceApplyConfiguration {
	ac := corev1ac.Service(svc.Name, svc.Namespace)
	if len(ingress) == 0 {
		return ac
	}
	lb := corev1ac.LoadBalancerStatus()
	for _, in := range ingress {
		e := corev1ac.LoadBalancerIngress()
		if in.IP != "" {
			e.WithIP(in.IP).WithIPMode(*in.IPMode)
		}
		for _, p := range in.Ports {
			e.WithPorts(corev1ac.PortStatus().WithPort(p.Port).WithProtocol(p.Protocol).WithError(*p.Error))
		}
		lb.WithIngress(e)
	}
	return ac.WithStatus(corev1ac.ServiceStatus().WithLoadBalancer(lb))
}
