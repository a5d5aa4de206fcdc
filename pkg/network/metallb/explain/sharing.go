package explain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// sharing tells why a Service may not have an address another Service
// holds, as MetalLB's allocator decides it: both must carry the same
// allow-shared-ip key, on ports that differ; nil when it may.
func (c *Cluster) sharing(svc *corev1.Service, a netip.Addr) *finding {
	for i := range c.Services {
		o := &c.Services[i]
		if o.Namespace == svc.Namespace && o.Name == svc.Name || !holds(o, a) {
			continue
		}
		key, theirs := svc.Annotations[AnnotationAllowShared], o.Annotations[AnnotationAllowShared]
		who := o.Namespace + "/" + o.Name
		switch {
		case key == "" || theirs == "":
			return &finding{"AddressTaken", fmt.Sprintf("It asks for %s, which Service %s holds.", a, who),
				fmt.Sprintf("Ask for another address, or share it: give both Services the same annotation %s, on ports that differ.", AnnotationAllowShared)}
		case key != theirs:
			return &finding{"SharingKeyConflict", fmt.Sprintf("It asks for %s, which Service %s holds with sharing key %q, and its own %s is %q.", a, who, theirs, AnnotationAllowShared, key),
				fmt.Sprintf("Give both Services the same %s, or ask for another address.", AnnotationAllowShared)}
		}
		if p := samePort(svc, o); p != "" {
			return &finding{"SharedPortConflict", fmt.Sprintf("It asks for %s, which it shares with Service %s, and both use port %s.", a, who, p),
				"Give one of them another port, or ask for another address."}
		}
	}
	return nil
}

// holds tells whether a Service has an address.
func holds(svc *corev1.Service, a netip.Addr) bool {
	return slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in corev1.LoadBalancerIngress) bool {
		b, err := netip.ParseAddr(in.IP)
		return err == nil && b == a
	})
}

// samePort is a port and protocol both Services use, "" when none.
func samePort(a, b *corev1.Service) string {
	for _, p := range a.Spec.Ports {
		for _, q := range b.Spec.Ports {
			if p.Port == q.Port && p.Protocol == q.Protocol {
				return fmt.Sprintf("%d/%s", p.Port, p.Protocol)
			}
		}
	}
	return ""
}

// noPoolServes tells, pool by pool, why none gives the Service an address.
func (c *Cluster) noPoolServes(svc *corev1.Service) *finding {
	fix := fmt.Sprintf("Create an IPAddressPool whose spec.serviceAllocation takes namespace %s (or that has none), or name a pool in the annotation %s.", svc.Namespace, AnnotationAddressPool)
	if len(c.Pools) == 0 {
		return &finding{"NoPool", fmt.Sprintf("No IPAddressPool exists in %s.", c.Namespace), fix}
	}
	var order []string
	by := map[string][]string{}
	for i := range c.Pools {
		r := c.refusal(&c.Pools[i], svc)
		if by[r] == nil {
			order = append(order, r)
		}
		by[r] = append(by[r], c.Pools[i].Name)
	}
	var why []string
	for _, r := range order {
		why = append(why, strings.Join(by[r], ", ")+": "+r)
	}
	s := fmt.Sprintf("No IPAddressPool gives it an address: %s.", strings.Join(why, "; "))
	if !c.Readable(KindNamespaces) {
		s += " (The namespaces could not be read: pools that select namespaces by label were taken not to select it.)"
	}
	return &finding{"NoPoolServes", s, fix}
}

// refusal says why a pool does not serve a Service.
func (c *Cluster) refusal(p *metallbv1beta1.IPAddressPool, svc *corev1.Service) string {
	if p.Spec.AutoAssign != nil && !*p.Spec.AutoAssign {
		return fmt.Sprintf("autoAssign is false, so only Services that name the pool in %s get its addresses", AnnotationAddressPool)
	}
	if !c.allocatesTo(p, svc) {
		return "spec.serviceAllocation takes other Services (" + allocationWords(p.Spec.AllocateTo) + ")"
	}
	var missing []string
	for _, f := range families(svc) {
		if !hasFamily(p, f) {
			missing = append(missing, string(f))
		}
	}
	return "no " + strings.Join(missing, " or ") + " addresses, which the Service asks for (spec.ipFamilies)"
}

func allocationWords(to *metallbv1beta1.ServiceAllocation) string {
	var parts []string
	if len(to.Namespaces) > 0 {
		parts = append(parts, "namespaces "+strings.Join(to.Namespaces, ", "))
	}
	if len(to.NamespaceSelectors) > 0 {
		parts = append(parts, "namespaces by label")
	}
	if len(to.ServiceSelectors) > 0 {
		parts = append(parts, "Services by label")
	}
	return strings.Join(parts, "; ")
}
