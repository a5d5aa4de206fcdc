package manifests

import (
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Where the platform may run frr-k8s, the frr-k8s backend uses it or says
// what to do; elsewhere, and with the native backend, nothing changes.
func TestFRRK8sBackendUsesThePlatforms(t *testing.T) {
	on := &PlatformFRRK8s{Namespace: OpenShiftFRRK8sNamespace, Enabled: true}
	off := &PlatformFRRK8s{Namespace: OpenShiftFRRK8sNamespace}
	blocking := v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s, FRRK8sConfig: &v1beta1.FRRK8sConfig{AlwaysBlock: []string{"192.0.2.0/24"}}}
	for _, tc := range []struct {
		name      string
		platform  *PlatformFRRK8s
		spec      v1beta1.MetalLBSpec
		namespace string // of the frr-k8s the speakers use; empty, the module's own
		err       []string
	}{
		{name: "no platform frr-k8s: the module's own", spec: frrK8s()},
		{name: "the platform's on: used", platform: on, spec: frrK8s(), namespace: OpenShiftFRRK8sNamespace},
		{name: "the platform's off: what to do", platform: off, spec: frrK8s(),
			err: []string{"spec.bgpBackend", "which is off", EnableFRRCommand}},
		{name: "native, the platform's off: nothing to say", platform: off},
		{name: "alwaysBlock, the platform's: refused", platform: on, spec: blocking, err: []string{"spec.frrk8sConfig.alwaysBlock", "remove it"}},
		{name: "alwaysBlock, the module's own: kept", spec: blocking},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Environment{Namespace: DefaultNamespace, PlatformFRRK8s: tc.platform}
			s, err := SettingsFor(env, &v1beta1.MetalLB{Spec: tc.spec})
			for _, want := range tc.err {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v does not say %q", err, want)
				}
			}
			if tc.err == nil && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := s.platformFRRK8sNamespace(); err == nil && got != tc.namespace {
				t.Errorf("the speakers use the frr-k8s in %q, want %q", got, tc.namespace)
			}
		})
	}
}

func frrK8s() v1beta1.MetalLBSpec { return v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s} }
