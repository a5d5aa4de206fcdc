package decide

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Class is the loadBalancerClass of the Services the mode always serves.
const Class = "networkoperator.openshift.io/node-address"

// Scope is what the module's plan lets the mode serve.
type Scope struct {
	// Enabled has the mode run and serve Services of its Class. While it is
	// not, the mode keeps no cache of Services and serves nothing.
	Enabled bool
	// Unclassed has it serve Services with no class too.
	Unclassed bool
	// AddressType is which of its addresses a node publishes; "" is its
	// ExternalIP addresses where it has any, else its InternalIP ones.
	AddressType v1beta1.NodeAddressType
}

// ScopeFor is the mode's scope on a platform that allows the module (allowed),
// for the MetalLB object's setting (nil when unset), whether MetalLB's
// controller runs and assigns Services with no class, and the number of
// nodes. The mode is on where the setting enables it, and by default on a
// single node only: there the node's address is the only one there is; on
// more nodes every Service would publish every node, which users of a
// multi-node cluster should choose. Where it is on, it serves its class, and
// Services with no class unless MetalLB assigns them.
func ScopeFor(allowed bool, setting *v1beta1.NodeAddress, metallbServesUnclassed bool, nodes int) Scope {
	mode := v1beta1.NodeAddressDisabled
	if nodes == 1 {
		mode = v1beta1.NodeAddressEnabled
	}
	var addressType v1beta1.NodeAddressType
	if setting != nil {
		addressType = setting.AddressType
		if setting.Mode != "" {
			mode = setting.Mode
		}
	}
	if !allowed || mode != v1beta1.NodeAddressEnabled {
		return Scope{}
	}
	return Scope{Enabled: true, Unclassed: !metallbServesUnclassed, AddressType: addressType}
}

// Serves tells whether the mode gives the Service addresses.
func (s Scope) Serves(svc *corev1.Service) bool {
	if !s.Enabled || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.DeletionTimestamp != nil {
		return false
	}
	if c := svc.Spec.LoadBalancerClass; c != nil {
		return *c == Class
	}
	return s.Unclassed
}
