package explain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// whyPending tells why a Service MetalLB serves has no address.
func (c *Cluster) whyPending(t Target) *finding {
	svc := t.Service
	requested, field := requestedAddresses(svc)
	named := svc.Annotations[AnnotationAddressPool]
	if len(requested) > 0 {
		if f := c.requestRefused(svc, requested, field, named); f != nil {
			return f
		}
		return c.allocationFailed(t)
	}
	if named != "" {
		p := c.pool(named)
		if p == nil {
			return &finding{"NoSuchPool", fmt.Sprintf("Its annotation %s names IPAddressPool %s, which does not exist in %s.", AnnotationAddressPool, named, c.Namespace),
				fmt.Sprintf("Name an existing pool (%s), or create %s.", c.poolNames(), named)}
		}
		if f := exhausted([]*metallbv1beta1.IPAddressPool{p}, svc); f != nil {
			return f
		}
		return c.allocationFailed(t)
	}
	var serving []*metallbv1beta1.IPAddressPool
	for i := range c.Pools {
		if p := &c.Pools[i]; c.serves(p, svc) && slices.ContainsFunc(families(svc), func(f corev1.IPFamily) bool { return hasFamily(p, f) }) {
			serving = append(serving, p)
		}
	}
	if len(serving) == 0 {
		return c.noPoolServes(svc)
	}
	if f := exhausted(serving, svc); f != nil {
		return f
	}
	return c.allocationFailed(t)
}

// requestedAddresses are the addresses a Service asks for, and the field
// that asks.
func requestedAddresses(svc *corev1.Service) ([]string, string) {
	if v := svc.Annotations[AnnotationAddresses]; v != "" {
		return strings.Split(v, ","), "annotation " + AnnotationAddresses
	}
	if svc.Spec.LoadBalancerIP != "" {
		return []string{svc.Spec.LoadBalancerIP}, "spec.loadBalancerIP"
	}
	return nil, ""
}

// requestRefused tells why addresses a Service asks for cannot be its: no
// pool holds one, it is not in the pool the Service names, or another
// Service holds it and they may not share it.
func (c *Cluster) requestRefused(svc *corev1.Service, requested []string, field, named string) *finding {
	for _, s := range requested {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return &finding{"InvalidAddress", fmt.Sprintf("Its %s asks for %q, which is not an IP address.", field, s), "Write one address of each family, separated by a comma."}
		}
		p := c.poolOf(a)
		if p == nil {
			return &finding{"AddressOutsidePools", fmt.Sprintf("Its %s asks for %s, which no IPAddressPool in %s holds.", field, a, c.Namespace),
				fmt.Sprintf("Ask for an address of a pool (%s), or add %s to a pool's spec.addresses.", c.poolRanges(), a)}
		}
		if named != "" && p.Name != named {
			return &finding{"AddressOutsideNamedPool", fmt.Sprintf("Its %s asks for %s, which is in IPAddressPool %s, and its annotation %s names %s.", field, a, p.Name, AnnotationAddressPool, named),
				"Ask for an address of the pool it names, or drop one of the two annotations."}
		}
		if f := c.sharing(svc, a); f != nil {
			return f
		}
	}
	return nil
}

// poolNames names the pools, or says there is none.
func (c *Cluster) poolNames() string {
	if len(c.Pools) == 0 {
		return "there is none"
	}
	names := make([]string, len(c.Pools))
	for i := range c.Pools {
		names[i] = c.Pools[i].Name
	}
	return strings.Join(names, ", ")
}

// poolRanges names each pool with its addresses.
func (c *Cluster) poolRanges() string {
	if len(c.Pools) == 0 {
		return fmt.Sprintf("there is none in %s", c.Namespace)
	}
	var out []string
	for i := range c.Pools {
		out = append(out, fmt.Sprintf("%s: %s", c.Pools[i].Name, strings.Join(c.Pools[i].Spec.Addresses, ", ")))
	}
	return strings.Join(out, "; ")
}

// exhausted tells that every pool that could give the Service an address
// has none left of a family it needs; nil when one has.
func exhausted(pools []*metallbv1beta1.IPAddressPool, svc *corev1.Service) *finding {
	var full []string
	for _, p := range pools {
		left := false
		for _, f := range families(svc) {
			left = left || hasFamily(p, f) && free(p, f) > 0
		}
		if left {
			return nil
		}
		full = append(full, fmt.Sprintf("%s (%d IPv4 and %d IPv6 addresses in use, none free)", p.Name, p.Status.AssignedIPv4, p.Status.AssignedIPv6))
	}
	return &finding{"PoolExhausted", fmt.Sprintf("Every IPAddressPool that serves it is exhausted: %s.", strings.Join(full, "; ")),
		"Add addresses to the pool's spec.addresses, or free one: kubectl get services -A --field-selector spec.type=LoadBalancer lists who holds them."}
}

// allocationFailed tells what MetalLB's controller said when it has said
// something; else that it has not allocated yet.
func (c *Cluster) allocationFailed(t Target) *finding {
	for _, ev := range slices.Backward(t.Events) {
		if ev.Type == corev1.EventTypeWarning && slices.Contains([]string{"AllocationFailed", "LoadBalancerFailed"}, ev.Reason) {
			return &finding{"AllocationFailed", Sentence("MetalLB's controller could not give it an address: " + ev.Message),
				fmt.Sprintf("kubectl logs deployment/controller -n %s tells more.", c.Namespace)}
		}
	}
	return &finding{"NotAllocatedYet", "MetalLB's controller has not given it an address yet, and has said nothing about it.",
		fmt.Sprintf("Wait a few seconds; if it stays so, kubectl logs deployment/controller -n %s.", c.Namespace)}
}
