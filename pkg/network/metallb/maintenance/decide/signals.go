package decide

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// OpenShift's machine-config daemon asks for a node's drain before an update
// that reboots it, by DesiredDrainAnnotation "drain-<rendered config>", and
// for its uncordon once the update is done ("uncordon-<rendered config>").
// The machine-config operator's pkg/daemon/constants names them.
const (
	DesiredDrainAnnotation = "machineconfiguration.openshift.io/desiredDrain"
	drainRequest           = "drain-"
)

// Signals say what tells that a node is being taken down for maintenance.
// Cordoning alone does not, unless Cordon: users cordon nodes to keep new
// pods off while they keep serving (MetalLB withdrew from cordoned nodes in
// v0.14.9 and reverted it in v0.15.0, metallb#2715, for that reason).
type Signals struct {
	// MachineConfigDrain: a drain the machine-config daemon asks for.
	MachineConfigDrain bool
	// Labels are labels a node carries while a tool takes it down: a key
	// (any value counts) or key=value (that value only: kured can set a
	// label before a reboot, --pre-reboot-node-labels, and another value
	// after it, but not remove it). Taints are keys of taints.
	Labels, Taints []string
	// Cordon: a node cordoned (spec.unschedulable) is going down.
	Cordon bool
}

// Any tells whether any signal is on: with none, maintenance is off.
func (s Signals) Any() bool {
	return s.MachineConfigDrain || s.Cordon || len(s.Labels) > 0 || len(s.Taints) > 0
}

// InMaintenance tells whether a node is being taken down for maintenance, by
// the signals, and by which: "" when it is not.
func (s Signals) InMaintenance(n *corev1.Node) string {
	if s.MachineConfigDrain && drainRequested(n) {
		return "the machine-config daemon asked for its drain (" + DesiredDrainAnnotation + ": " + n.Annotations[DesiredDrainAnnotation] + ")"
	}
	for _, l := range s.Labels {
		if carries(n, l) {
			return "it carries the label " + l
		}
	}
	for _, t := range n.Spec.Taints {
		for _, key := range s.Taints {
			if t.Key == key {
				return "it carries the taint " + key
			}
		}
	}
	if s.Cordon && n.Spec.Unschedulable {
		return "it is cordoned"
	}
	return ""
}

// drainRequested tells whether the machine-config daemon asks for a node's drain.
func drainRequested(n *corev1.Node) bool {
	return strings.HasPrefix(n.Annotations[DesiredDrainAnnotation], drainRequest)
}

// SignalsFor are the signals the MetalLB object's setting (nil when unset)
// names, on OpenShift (where the machine-config daemon's drain requests
// count) or elsewhere. Maintenance is on where the setting enables it, and by
// default on OpenShift, or elsewhere once a signal is named: no signal, no
// maintenance.
func SignalsFor(openshift bool, setting *v1beta1.Maintenance) Signals {
	s := Signals{MachineConfigDrain: openshift}
	mode := v1beta1.MaintenanceEnabled
	if setting != nil {
		s.Labels, s.Taints, s.Cordon = setting.NodeLabels, setting.NodeTaints, setting.Cordon
		if setting.Mode != "" {
			mode = setting.Mode
		}
	}
	if mode == v1beta1.MaintenanceDisabled {
		return Signals{}
	}
	return s
}

// LabelSelector selects the nodes that carry a label signal; a label that is
// not a valid key (or key=value) is an error that names it.
func LabelSelector(label string) (labels.Selector, error) {
	key, value, withValue := strings.Cut(label, "=")
	op, values := selection.Exists, []string(nil)
	if withValue {
		op, values = selection.Equals, []string{value}
	}
	req, err := labels.NewRequirement(key, op, values)
	if err != nil {
		return nil, fmt.Errorf("spec.maintenance.nodeLabels: %q is not a label key or key=value: %w", label, err)
	}
	return labels.NewSelector().Add(*req), nil
}

// carries tells whether a node carries a label: "key", of any value, or
// "key=value".
func carries(n *corev1.Node, label string) bool {
	key, value, withValue := strings.Cut(label, "=")
	v, ok := n.Labels[key]
	return ok && (!withValue || v == value)
}
