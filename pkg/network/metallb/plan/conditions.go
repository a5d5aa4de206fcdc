package plan

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Reasons of the conditions (the types are status's), and of the Events that
// tell the same situation on the objects concerned.
const (
	ReasonPlatformNotSupported = explain.ReasonPlatformNotSupported
	ReasonForeignObjects       = "ForeignObjects"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonRenderingRefused     = "RenderingRefused"
	ReasonIgnored              = "Ignored"
	ReasonRolloutHung          = "RolloutHung"
	// ReasonPodsRefused: a workload's controller cannot create its pods;
	// admission (an SCC, Pod Security, a policy, a webhook) or a quota
	// refuses them.
	ReasonPodsRefused = "PodsRefused"
)

// statusOnMetalLB tells whether the MetalLB object carries the status: there
// is one, and it is not another MetalLB operator's.
func (p *Plan) statusOnMetalLB() bool { return p.metallb != nil && !p.foreignAPI }

// deployed tells whether MetalLB's workloads are meant to run.
func (p *Plan) deployed() bool { return p.allowed && len(p.foreign) == 0 && p.configured }

// conditions are the four conditions, given how act's writes went.
func (p *Plan) conditions(actErr error) status.Conditions {
	cs := status.NewConditions()
	degraded, reason, message := p.degraded(actErr)
	cs.Set(status.Degraded, degraded, reason, message)
	available, reason, message := p.available()
	cs.Set(status.Available, available, reason, message)
	switch {
	case p.tracking.InFlight() && p.deployed():
		cs.Set(status.Progressing, metav1.ConditionTrue, "RollingOut", p.progressMessage())
	case p.frrK8sLeaving && p.deployed():
		cs.Set(status.Progressing, metav1.ConditionTrue, "RollingOut", p.leavingMessage())
	}
	if p.hung {
		cs.Set(status.Upgradeable, metav1.ConditionFalse, ReasonRolloutHung, "A rollout of MetalLB is hung: fix it before upgrading.")
	}
	return cs
}

// degraded returns the Degraded condition's status, reason and message, the
// most pressing problem first.
func (p *Plan) degraded(actErr error) (metav1.ConditionStatus, string, string) {
	namespace := p.opts.Namespace
	refused := refusedMessage(p.rollouts, namespace)
	switch {
	case !p.allowed && p.configured:
		return metav1.ConditionTrue, ReasonPlatformNotSupported, platformMessage(p.platform, p.opts.AllowedPlatforms)
	case p.managedBy != "":
		// Nobody asked this operator for anything.
		return metav1.ConditionFalse, ReasonManagedElsewhere, managedElsewhereMessage(*metallbCRD(p.foreign), p.managedBy, namespace)
	case len(p.foreign) > 0 && p.takeoverAsked:
		return metav1.ConditionTrue, ReasonTakeoverBlocked, fmt.Sprintf("MetalLB was not taken over, though the %s annotation of "+
			"namespace %s asks for it, and nothing was changed: %s The takeover goes ahead once that is resolved.",
			manifests.AdoptAnnotation, namespace, problemMessages(p.blockers))
	case len(p.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, strings.TrimSpace(foreignMessage(p.foreign, p.blockers, namespace) + " " + problemMessages(p.blockers))
	case len(p.others) > 0:
		return metav1.ConditionTrue, p.others[0].reason, problemMessages(p.others)
	case p.invalid != nil && !p.lastValid:
		return metav1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("%v. Fix the spec: no valid spec was applied before (status.appliedSpec is empty), so nothing running is changed until then.", p.invalid)
	case p.invalid != nil:
		return metav1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("%v. Fix the spec: until then MetalLB keeps running as the last valid spec asked (status.appliedSpec).", p.invalid)
	case errors.As(actErr, new(*RenderingRefused)):
		return metav1.ConditionTrue, ReasonRenderingRefused, fmt.Sprintf("%v. Nothing was written: MetalLB runs as before "+
			"(status.appliedSpec). Change the MetalLB object's spec so that its rendering is valid; each change is checked again.", actErr)
	case actErr != nil:
		return metav1.ConditionTrue, ReasonApplyFailed, fmt.Sprintf("Applying MetalLB's manifests failed, will retry: %v", actErr)
	case refused != "":
		return metav1.ConditionTrue, ReasonPodsRefused, refused
	case p.hung:
		return metav1.ConditionTrue, ReasonRolloutHung, fmt.Sprintf(
			"The rollout of %s has made no progress for %s (%s); %s. Look at their pods: kubectl get pods -n %s -o wide",
			p.tracking.Target, p.opts.HungAfter, p.progressMessage(), p.notReady(), namespace)
	}
	message := "MetalLB runs as configured."
	for _, o := range p.elsewhere {
		message += " " + ignoredMessage(o, namespace) + "."
	}
	for _, m := range p.mistakes {
		message += " " + m.message + "."
	}
	return metav1.ConditionFalse, status.ReasonAsExpected, message
}

// notReady names the nodes of a hung rollout, by the pod not ready on them.
func (p *Plan) notReady() string {
	var parts []string
	if len(p.hungNodes) > 0 || len(p.hungFRRK8sNodes) == 0 {
		parts = append(parts, "the speaker is not ready on nodes: "+joinOr(p.hungNodes, "none named (pods not yet scheduled)"))
	}
	if len(p.hungFRRK8sNodes) > 0 {
		parts = append(parts, "frr-k8s is not ready on nodes: "+strings.Join(p.hungFRRK8sNodes, ", "))
	}
	return strings.Join(parts, "; ")
}

// available returns the Available condition: MetalLB serves when its
// controller is available and a speaker runs on every node it should, but
// for those a rolling update may take down at once.
func (p *Plan) available() (metav1.ConditionStatus, string, string) {
	switch {
	case !p.allowed:
		return metav1.ConditionTrue, ReasonPlatformNotSupported, platformMessage(p.platform, p.opts.AllowedPlatforms)
	case p.managedBy != "":
		return metav1.ConditionTrue, ReasonManagedElsewhere, managedElsewhereMessage(*metallbCRD(p.foreign), p.managedBy, p.opts.Namespace)
	case len(p.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, "Another installation runs MetalLB; this operator changes nothing."
	case !p.configured:
		return metav1.ConditionTrue, "NotConfigured", fmt.Sprintf("MetalLB is not configured: create an IPAddressPool in %s to deploy it.", p.opts.Namespace)
	}
	controller, speaker, frrK8s := p.rollout(manifests.ControllerName), p.rollout(manifests.SpeakerName), p.rollout(manifests.FRRK8sName)
	switch {
	case controller == nil || speaker == nil || controller.Absent || speaker.Absent || frrK8s != nil && frrK8s.Absent:
		return metav1.ConditionFalse, "Deploying", "MetalLB's workloads are being created."
	case controller.Available == 0:
		return metav1.ConditionFalse, "ControllerUnavailable", "MetalLB's controller is not available: no address is handed out. " + controller.Message()
	case speaker.Desired == 0:
		return metav1.ConditionFalse, "NoSpeakers", "No node runs a speaker, so no address is announced: check spec.nodeSelector and spec.speakerTolerations of the MetalLB object against the nodes' labels and taints."
	case speaker.Unavailable() > p.allowedDown(speaker):
		return metav1.ConditionFalse, "SpeakersUnavailable", "Speakers are missing on some nodes, whose addresses are not announced. " + speaker.Message()
	case frrK8s != nil && frrK8s.Unavailable() > p.allowedDown(frrK8s):
		return metav1.ConditionFalse, "FRRK8sUnavailable", "frr-k8s is missing on some nodes, whose speakers cannot announce by BGP. " + frrK8s.Message()
	}
	return metav1.ConditionTrue, status.ReasonAsExpected, "MetalLB's controller is available and a speaker runs on every node."
}

// allowedDown is how many pods of a DaemonSet may be unavailable: none, but during a
// rollout as many as it takes down at once.
func (p *Plan) allowedDown(ds *status.Rollout) int64 {
	if !p.tracking.InFlight() {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&p.maxUnavailable, int(ds.Desired), true)
	if err != nil {
		return 1
	}
	return int64(n)
}

func (p *Plan) rollout(name string) *status.Rollout {
	for i := range p.rollouts {
		if p.rollouts[i].Name == name {
			return &p.rollouts[i]
		}
	}
	return nil
}

// progressMessage says how far the rollout is, as last recorded (at most a
// tenth of its pods behind the workloads: status.Track).
func (p *Plan) progressMessage() string {
	return fmt.Sprintf("Rolling out %s: %s", p.tracking.Target, cmp.Or(p.tracking.Progress, "creating the workloads"))
}

// joinOr joins items for a message, or says none.
func joinOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
