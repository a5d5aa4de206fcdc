package plan

import (
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// The node-address mode's scope, as the module's plan decides it, and
// whether MetalLB is deployed beside it.
func TestPlanNodeAddress(t *testing.T) {
	enable := v1beta1.MetalLBSpec{NodeAddress: &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressEnabled}}
	disable := v1beta1.MetalLBSpec{NodeAddress: &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressDisabled}}
	internal := v1beta1.MetalLBSpec{NodeAddress: &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressEnabled, AddressType: v1beta1.NodeInternalIP},
		LogLevel: v1beta1.LogLevelDebug}
	classed := v1beta1.MetalLBSpec{LoadBalancerClass: "example.com/metallb", NodeAddress: enable.NodeAddress}
	nodes := func(n int) func(*Snapshot) { return func(s *Snapshot) { s.Platform.NodeCount = n } }
	classOnly := decide.Scope{Enabled: true}
	all := decide.Scope{Enabled: true, Unclassed: true}
	for _, tc := range []struct {
		name     string
		cluster  func(*Snapshot)
		want     decide.Scope
		deployed bool
	}{
		{"single node, nothing configured: unclassed too", nodes(1), all, false},
		{"three nodes, nothing configured: off", nodes(3), decide.Scope{}, false},
		{"single node, a pool: handed to MetalLB", func(s *Snapshot) { nodes(1)(s); pool(s) }, classOnly, true},
		{"Enabled on three nodes: unclassed too, and MetalLB not deployed", func(s *Snapshot) { nodes(3)(s); withSpec(enable)(s) }, all, false},
		{"Enabled with a pool: MetalLB's", func(s *Snapshot) { nodes(3)(s); withSpec(enable)(s); pool(s) }, classOnly, true},
		{"Enabled with MetalLB serving a class of its own: unclassed stay", func(s *Snapshot) { nodes(3)(s); withSpec(classed)(s); pool(s) }, all, true},
		{"Enabled, InternalIP, other settings: the address type", func(s *Snapshot) { nodes(3)(s); withSpec(internal)(s) },
			decide.Scope{Enabled: true, Unclassed: true, AddressType: v1beta1.NodeInternalIP}, false},
		{"Disabled on a single node: off, and a tuning object deploys MetalLB, as before", func(s *Snapshot) { nodes(1)(s); withSpec(disable)(s) }, decide.Scope{}, true},
		{"a platform not allowed: nothing", func(s *Snapshot) { nodes(1)(s); awsNodes(s) }, decide.Scope{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := empty(t, planOptions())
			tc.cluster(s)
			p := Make(s, planOptions(), now)
			if p.NodeAddress == nil || *p.NodeAddress != tc.want {
				t.Errorf("NodeAddress = %+v, want %+v", p.NodeAddress, tc.want)
			}
			if p.deployed() != tc.deployed {
				t.Errorf("MetalLB deployed = %v, want %v", p.deployed(), tc.deployed)
			}
		})
	}
}
