package decide

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

func TestScopeFor(t *testing.T) {
	enabled := &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressEnabled}
	disabled := &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressDisabled, AddressType: v1beta1.NodeInternalIP}
	for _, tc := range []struct {
		name          string
		allowed       bool
		setting       *v1beta1.NodeAddress
		metallbServes bool
		nodes         int
		want          Scope
	}{
		{"platform not allowed: off", false, enabled, false, 1, Scope{}},
		{"single node, unset: on, unclassed served", true, nil, false, 1, Scope{Enabled: true, Unclassed: true}},
		{"three nodes, unset: off, the class included", true, nil, false, 3, Scope{}},
		{"three nodes, mode unset, address type set: off", true, &v1beta1.NodeAddress{AddressType: v1beta1.NodeInternalIP}, false, 3, Scope{}},
		{"single node, MetalLB serves unclassed: only the class", true, nil, true, 1, Scope{Enabled: true}},
		{"three nodes, Enabled: unclassed served", true, enabled, false, 3, Scope{Enabled: true, Unclassed: true}},
		{"Enabled, MetalLB serves unclassed: only the class", true, enabled, true, 3, Scope{Enabled: true}},
		{"Enabled with an address type: kept", true, &v1beta1.NodeAddress{Mode: v1beta1.NodeAddressEnabled, AddressType: v1beta1.NodeInternalIP}, false, 3,
			Scope{Enabled: true, Unclassed: true, AddressType: v1beta1.NodeInternalIP}},
		{"single node, Disabled: off, the class included", true, disabled, false, 1, Scope{}},
		{"no node yet, unset: off", true, nil, false, 0, Scope{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScopeFor(tc.allowed, tc.setting, tc.metallbServes, tc.nodes); got != tc.want {
				t.Errorf("ScopeFor = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestServes(t *testing.T) {
	other := "example.com/other"
	for _, tc := range []struct {
		name  string
		scope Scope
		svc   *corev1.Service
		want  bool
	}{
		{"the class, classed only", Scope{Enabled: true}, lb("a", withClass(Class)), true},
		{"the class, mode off", Scope{}, lb("a", withClass(Class)), false},
		{"unclassed, classed only", Scope{Enabled: true}, lb("a"), false},
		{"unclassed, unclassed served", Scope{Enabled: true, Unclassed: true}, lb("a"), true},
		{"another class, never", Scope{Enabled: true, Unclassed: true}, lb("a", withClass(other)), false},
		{"not a LoadBalancer", Scope{Enabled: true, Unclassed: true}, lb("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.scope.Serves(tc.svc); got != tc.want {
				t.Errorf("Serves = %v, want %v", got, tc.want)
			}
		})
	}
}
