package explain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// MetalLB's Service annotations (its controller's package is internal).
const (
	AnnotationAddressPool   = "metallb.io/address-pool"
	AnnotationAddresses     = "metallb.io/loadBalancerIPs"
	AnnotationAllocatedFrom = "metallb.io/ip-allocated-from-pool"
	AnnotationAllowShared   = "metallb.io/allow-shared-ip"
)

// Range is one entry of a pool's spec.addresses: a CIDR or a range
// "first-last".
type Range struct{ first, last netip.Addr }

// PrefixRange is a prefix's addresses.
func PrefixRange(p netip.Prefix) Range {
	p = p.Masked()
	return Range{p.Addr(), lastOf(p)}
}

// ParseRange reads an entry of a pool's spec.addresses.
func ParseRange(s string) (Range, error) {
	if first, last, ok := strings.Cut(s, "-"); ok {
		a, err1 := netip.ParseAddr(strings.TrimSpace(first))
		b, err2 := netip.ParseAddr(strings.TrimSpace(last))
		if err1 != nil || err2 != nil || b.Less(a) || a.Is4() != b.Is4() {
			return Range{}, fmt.Errorf("invalid range %q", s)
		}
		return Range{a, b}, nil
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return Range{}, err
	}
	return PrefixRange(p), nil
}

// lastOf is a prefix's last address.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Contains tells whether an address is in the range.
func (r Range) Contains(a netip.Addr) bool {
	return r.first.Compare(a) <= 0 && a.Compare(r.last) <= 0
}

// Overlaps tells whether two ranges share an address.
func (r Range) Overlaps(o Range) bool {
	return r.first.Is4() == o.first.Is4() && r.first.Compare(o.last) <= 0 && o.first.Compare(r.last) <= 0
}

// RangesOf are the ranges of a pool's spec.addresses; entries that do not
// parse are left out (MetalLB refuses the pool, and its ConfigurationState
// says so).
func RangesOf(addresses []string) []Range {
	var out []Range
	for _, s := range addresses {
		if r, err := ParseRange(s); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// poolOf is the pool whose addresses hold a, nil when none does.
func (c *Cluster) poolOf(a netip.Addr) *metallbv1beta1.IPAddressPool {
	for i := range c.Pools {
		if slices.ContainsFunc(RangesOf(c.Pools[i].Spec.Addresses), func(r Range) bool { return r.Contains(a) }) {
			return &c.Pools[i]
		}
	}
	return nil
}

// pool is the pool of a name, nil when none has it.
func (c *Cluster) pool(name string) *metallbv1beta1.IPAddressPool {
	for i := range c.Pools {
		if c.Pools[i].Name == name {
			return &c.Pools[i]
		}
	}
	return nil
}

// serves tells whether MetalLB's allocator would hand out a pool's
// addresses to a Service that names no pool: the pool assigns
// automatically, and its spec.serviceAllocation, if any, takes the
// Service's namespace and labels.
func (c *Cluster) serves(p *metallbv1beta1.IPAddressPool, svc *corev1.Service) bool {
	if p.Spec.AutoAssign != nil && !*p.Spec.AutoAssign {
		return false
	}
	return c.allocatesTo(p, svc)
}

// allocatesTo is the pool's spec.serviceAllocation alone.
func (c *Cluster) allocatesTo(p *metallbv1beta1.IPAddressPool, svc *corev1.Service) bool {
	to := p.Spec.AllocateTo
	if to == nil {
		return true
	}
	if len(to.Namespaces) > 0 || len(to.NamespaceSelectors) > 0 {
		if !slices.Contains(to.Namespaces, svc.Namespace) && !c.namespaceSelected(to, svc.Namespace) {
			return false
		}
	}
	return selectsAny(to.ServiceSelectors, svc.Labels)
}

func (c *Cluster) namespaceSelected(to *metallbv1beta1.ServiceAllocation, name string) bool {
	if len(to.NamespaceSelectors) == 0 {
		return false
	}
	for _, ns := range c.Namespaces {
		if ns.Name == name {
			return selectsAny(to.NamespaceSelectors, ns.Labels)
		}
	}
	return false
}

// families are the address families a Service asks for.
func families(svc *corev1.Service) []corev1.IPFamily {
	if len(svc.Spec.IPFamilies) == 0 {
		return []corev1.IPFamily{corev1.IPv4Protocol}
	}
	return svc.Spec.IPFamilies
}

// free is how many addresses of a family the pool has left, from its
// status (MetalLB's controller writes it).
func free(p *metallbv1beta1.IPAddressPool, f corev1.IPFamily) int64 {
	if f == corev1.IPv6Protocol {
		return p.Status.AvailableIPv6
	}
	return p.Status.AvailableIPv4
}

// hasFamily tells whether a pool has addresses of a family.
func hasFamily(p *metallbv1beta1.IPAddressPool, f corev1.IPFamily) bool {
	return slices.ContainsFunc(RangesOf(p.Spec.Addresses), func(r Range) bool { return r.first.Is4() == (f == corev1.IPv4Protocol) })
}
