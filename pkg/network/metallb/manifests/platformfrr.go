package manifests

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// PlatformFRRK8s is the frr-k8s a platform runs itself: on OpenShift the
// cluster network operator runs frr-k8s in OpenShiftFRRK8sNamespace once its
// Network object lists FRR among spec.additionalRoutingCapabilities.providers
// (Enabled). Where it may run one, MetalLB's speakers use it, and the module
// never deploys a second: two FRRs on a node would both bind BGP's port.
type PlatformFRRK8s struct {
	Namespace string
	Enabled   bool
}

// OpenShiftFRRK8sNamespace is where OpenShift's network operator runs frr-k8s.
const OpenShiftFRRK8sNamespace = "openshift-frr-k8s"

// EnableFRRCommand turns on the frr-k8s of OpenShift's network operator.
const EnableFRRCommand = `oc patch network.operator cluster --type=merge -p '{"spec":{"additionalRoutingCapabilities":{"providers":["FRR"]}}}'`

// deploysFRRK8s tells whether the module deploys frr-k8s: with the frr-k8s
// backend, where the platform may run none.
func (s Settings) deploysFRRK8s() bool {
	return s.BGPBackend == v1beta1.BGPBackendFRRK8s && s.PlatformFRRK8s == nil
}

// platformFRRK8sNamespace is the namespace of the platform's frr-k8s that the
// speakers use: with the frr-k8s backend, where the platform may run one
// (checkPlatformFRRK8s refuses the settings where it does not); else empty.
func (s Settings) platformFRRK8sNamespace() string {
	if s.BGPBackend != v1beta1.BGPBackendFRRK8s || s.PlatformFRRK8s == nil {
		return ""
	}
	return s.PlatformFRRK8s.Namespace
}

// checkPlatformFRRK8s says, where the frr-k8s backend is to use the
// platform's frr-k8s, what the user must do while it is off, or when the spec
// asks of frr-k8s what applies only to the module's own.
func checkPlatformFRRK8s(s Settings, spec *v1beta1.MetalLBSpec) field.ErrorList {
	platform := s.PlatformFRRK8s
	if s.platformFRRK8sNamespace() == "" {
		return nil
	}
	var errs field.ErrorList
	if !platform.Enabled {
		errs = append(errs, field.Invalid(field.NewPath("spec", "bgpBackend"), s.BGPBackend,
			"on OpenShift MetalLB uses the cluster network operator's frr-k8s, which is off: add FRR to the Network object's "+
				"spec.additionalRoutingCapabilities.providers ("+EnableFRRCommand+"), or use bgpBackend native"))
	}
	if c := spec.FRRK8sConfig; c != nil && len(c.AlwaysBlock) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "frrk8sConfig", "alwaysBlock"),
			"configures the frr-k8s this operator deploys; on OpenShift MetalLB uses the cluster network operator's frr-k8s, "+
				"which this operator does not configure: remove it"))
	}
	return errs
}
