package metallb

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Reasons of the conditions (the types are status's), and of the Events that
// tell the same situation on the objects concerned.
const (
	ReasonAsExpected           = "AsExpected"
	ReasonPlatformNotSupported = "PlatformNotSupported"
	ReasonForeignObjects       = "ForeignObjects"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonIgnored              = "Ignored"
	ReasonRolloutHung          = "RolloutHung"
)

// findings are what the plan found, for the conditions.
type findings struct {
	now             time.Time
	platform        Platform
	allowed, active bool
	tuning          *v1beta1.MetalLB
	specValid       bool  // the tuning object's spec was checked and is valid
	invalid         error // why it is not
	lastValid       bool  // status.appliedSpec holds a valid spec, which runs instead
	foreign         []apply.Foreign
	blockers        []conflict                      // what stops taking the foreign objects over
	takeoverAsked   bool                            // the adoption annotation asks for it
	others          []conflict                      // other MetalLB workloads beside the module's
	mistakes        []conflict                      // in the user's configuration: told, never Degraded
	foreignAPI      bool                            // the MetalLB CRD is another operator's
	managedBy       string                          // who manages MetalLB instead, when another operator does
	elsewhere       []*metav1.PartialObjectMetadata // configuration objects MetalLB ignores
	rollouts        []status.Rollout
	tracking        status.Tracking
	hung            bool
	// hungNodes name the nodes whose speaker, or whose frr-k8s, is not ready.
	hungNodes, hungFRRK8sNodes []string
	// maxUnavailable is the speakers' rollout pace, for Available.
	maxUnavailable  intstr.IntOrString
	clusterOperator *configv1.ClusterOperator
}

// statusOnTuning tells whether the tuning object carries the status: there is
// one, and it is not another MetalLB operator's.
func (f *findings) statusOnTuning() bool { return f.tuning != nil && !f.foreignAPI }

// deployed tells whether MetalLB's workloads are meant to run.
func (f *findings) deployed() bool { return f.allowed && len(f.foreign) == 0 && f.active }

// conditions are the four conditions, given how act's writes went.
func (f *findings) conditions(opts Options, actErr error) status.Conditions {
	cs := status.NewConditions()
	degraded, reason, message := f.degraded(opts, actErr)
	cs.Set(status.Degraded, degraded, reason, message)
	available, reason, message := f.available(opts)
	cs.Set(status.Available, available, reason, message)
	if f.tracking.InFlight() && f.deployed() {
		cs.Set(status.Progressing, metav1.ConditionTrue, "RollingOut", f.progressMessage())
	}
	if f.hung {
		cs.Set(status.Upgradeable, metav1.ConditionFalse, ReasonRolloutHung, "A rollout of MetalLB is hung: fix it before upgrading.")
	}
	return cs
}

// degraded returns the Degraded condition's status, reason and message, the
// most pressing problem first.
func (f *findings) degraded(opts Options, actErr error) (metav1.ConditionStatus, string, string) {
	switch {
	case !f.allowed && f.active:
		return metav1.ConditionTrue, ReasonPlatformNotSupported, platformMessage(f.platform, opts.AllowedPlatforms)
	case f.managedBy != "":
		// Nobody asked this operator for anything.
		return metav1.ConditionFalse, ReasonManagedElsewhere, managedElsewhereMessage(*metallbCRD(f.foreign), f.managedBy, opts.Namespace)
	case len(f.foreign) > 0 && f.takeoverAsked:
		return metav1.ConditionTrue, ReasonTakeoverBlocked, fmt.Sprintf("MetalLB was not taken over, though the %s annotation of "+
			"namespace %s asks for it, and nothing was changed: %s The takeover goes ahead once that is resolved.",
			AdoptAnnotation, opts.Namespace, conflictMessages(f.blockers))
	case len(f.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, strings.TrimSpace(foreignMessage(f.foreign, f.blockers, opts.Namespace) + " " + conflictMessages(f.blockers))
	case len(f.others) > 0:
		return metav1.ConditionTrue, f.others[0].reason, conflictMessages(f.others)
	case f.invalid != nil && !f.lastValid:
		return metav1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("%v. Fix the spec: no valid spec was applied before (status.appliedSpec is empty), so nothing running is changed until then.", f.invalid)
	case f.invalid != nil:
		return metav1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("%v. Fix the spec: until then MetalLB keeps running as the last valid spec asked (status.appliedSpec).", f.invalid)
	case actErr != nil:
		return metav1.ConditionTrue, ReasonApplyFailed, fmt.Sprintf("Applying MetalLB's manifests failed, will retry: %v", actErr)
	case f.hung:
		return metav1.ConditionTrue, ReasonRolloutHung, fmt.Sprintf(
			"The rollout of %s has made no progress for %s (%s); %s. Look at their pods: kubectl get pods -n %s -o wide",
			f.tracking.Target, opts.HungAfter, f.progressMessage(), f.notReady(), opts.Namespace)
	}
	message := "MetalLB runs as configured."
	for _, o := range f.elsewhere {
		message += " " + ignoredMessage(o, opts.Namespace) + "."
	}
	for _, m := range f.mistakes {
		message += " " + m.message + "."
	}
	return metav1.ConditionFalse, ReasonAsExpected, message
}

// notReady names the nodes of a hung rollout, by the pod not ready on them.
func (f *findings) notReady() string {
	var parts []string
	if len(f.hungNodes) > 0 || len(f.hungFRRK8sNodes) == 0 {
		parts = append(parts, "the speaker is not ready on nodes: "+joinOr(f.hungNodes, "none named (pods not yet scheduled)"))
	}
	if len(f.hungFRRK8sNodes) > 0 {
		parts = append(parts, "frr-k8s is not ready on nodes: "+strings.Join(f.hungFRRK8sNodes, ", "))
	}
	return strings.Join(parts, "; ")
}

// available tells whether MetalLB serves: its controller is available and a
// speaker runs on every node it should, but for those a rolling update may
// take down at once.
func (f *findings) available(opts Options) (metav1.ConditionStatus, string, string) {
	switch {
	case !f.allowed:
		return metav1.ConditionTrue, ReasonPlatformNotSupported, "MetalLB is not deployed on this platform. " + platformMessage(f.platform, opts.AllowedPlatforms)
	case f.managedBy != "":
		return metav1.ConditionTrue, ReasonManagedElsewhere, managedElsewhereMessage(*metallbCRD(f.foreign), f.managedBy, opts.Namespace)
	case len(f.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, "Another installation runs MetalLB; this operator changes nothing."
	case !f.active:
		return metav1.ConditionTrue, "NotConfigured", fmt.Sprintf("MetalLB is not configured: create an IPAddressPool in %s to deploy it.", opts.Namespace)
	}
	controller, speaker, frrK8s := f.rollout(controllerName), f.rollout(speakerName), f.rollout(frrK8sName)
	switch {
	case controller == nil || speaker == nil || controller.Absent || speaker.Absent || frrK8s != nil && frrK8s.Absent:
		return metav1.ConditionFalse, "Deploying", "MetalLB's workloads are being created."
	case controller.Available == 0:
		return metav1.ConditionFalse, "ControllerUnavailable", "MetalLB's controller is not available: no address is handed out. " + controller.Message()
	case speaker.Desired == 0:
		return metav1.ConditionFalse, "NoSpeakers", "No node runs a speaker, so no address is announced: check spec.nodeSelector and spec.speakerTolerations of the MetalLB object against the nodes' labels and taints."
	case speaker.Unavailable() > f.allowedDown(speaker):
		return metav1.ConditionFalse, "SpeakersUnavailable", "Speakers are missing on some nodes, whose addresses are not announced. " + speaker.Message()
	case frrK8s != nil && frrK8s.Unavailable() > f.allowedDown(frrK8s):
		return metav1.ConditionFalse, "FRRK8sUnavailable", "frr-k8s is missing on some nodes, whose speakers cannot announce by BGP. " + frrK8s.Message()
	}
	return metav1.ConditionTrue, ReasonAsExpected, "MetalLB's controller is available and a speaker runs on every node."
}

// allowedDown is how many pods of a DaemonSet may be unavailable: none, but during a
// rollout as many as it takes down at once.
func (f *findings) allowedDown(ds *status.Rollout) int64 {
	if !f.tracking.InFlight() {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&f.maxUnavailable, int(ds.Desired), true)
	if err != nil {
		return 1
	}
	return int64(n)
}

func (f *findings) rollout(name string) *status.Rollout {
	for i := range f.rollouts {
		if f.rollouts[i].Name == name {
			return &f.rollouts[i]
		}
	}
	return nil
}

func (f *findings) progressMessage() string {
	parts := make([]string, len(f.rollouts))
	for i, r := range f.rollouts {
		parts[i] = r.Message()
	}
	return fmt.Sprintf("Rolling out %s: %s", f.tracking.Target, joinOr(parts, "creating the workloads"))
}

func platformMessage(p Platform, allowed []string) string {
	return fmt.Sprintf("MetalLB is not deployed: the platform is %s (from %s), and the operator deploys MetalLB only on %s. "+
		"To deploy it anyway, start the operator with --platform=BareMetal.", p.Type, p.Source, strings.Join(allowed, ", "))
}

// foreignMessage tells what another installation owns, and how to hand it
// over, once the blockers' own messages are acted on.
func foreignMessage(foreign []apply.Foreign, blockers []conflict, namespace string) string {
	names := make([]string, len(foreign))
	for i, f := range foreign {
		names[i] = f.String()
	}
	handOver := "hand MetalLB over to this operator, which then takes those objects over in place (the addresses and the memberlist " +
		"key are kept; MetalLB's pods restart once, the speakers one at a time)"
	if len(blockers) > 0 {
		reasons := make([]string, len(blockers))
		for i, b := range blockers {
			reasons[i] = b.reason
		}
		handOver = fmt.Sprintf("hand MetalLB over to this operator once what stops a takeover is resolved (%s: see those Events)",
			strings.Join(slices.Compact(reasons), ", "))
	}
	return fmt.Sprintf("Another installation of MetalLB owns objects this operator would write: %s. Nothing was changed. "+
		"Remove that installation, or %s: kubectl annotate namespace %s %s=true", strings.Join(names, "; "), handOver, namespace, AdoptAnnotation)
}

func ignoredMessage(o *metav1.PartialObjectMetadata, namespace string) string {
	return fmt.Sprintf("%s %s/%s is outside %s and is ignored", o.Kind, o.Namespace, o.Name, namespace)
}

// failed joins planning's failure with act's error.
func (p *Plan) failed(actErr error) error { return errors.Join(p.failure, actErr) }
