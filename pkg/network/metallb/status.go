package metallb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Reasons of the MetalLB object's conditions (the types are status's).
const (
	ReasonAsExpected           = "AsExpected"
	ReasonPlatformNotSupported = "PlatformNotSupported"
	ReasonForeignObjects       = "ForeignObjects"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonIgnoredObject        = "IgnoredObject"
	ReasonRolloutHung          = "RolloutHung"
)

// AdoptAnnotation, set to "true" on MetalLB's namespace, lets the operator take
// over MetalLB objects another installation created.
const AdoptAnnotation = "networkoperator.openshift.io/adopt-metallb"

// state is what one reconcile found, for the status and the Events.
type state struct {
	tuning    *v1beta1.MetalLB
	platform  Platform
	allowed   bool
	specValid bool  // the tuning object's spec was checked and is valid
	invalid   error // why it is not
	foreign   []apply.Foreign
	configs   configs
	rollouts  []status.Rollout
	tracking  status.Tracking
	hung      bool
	hungNodes []string
	// maxUnavailable is the speakers' rollout pace, for Available.
	maxUnavailable intstr.IntOrString
	requeueAfter   time.Duration
	applyErr       error
}

// active tells whether the user asked for MetalLB.
func (s *state) active() bool { return len(s.configs.inNamespace) > 0 || s.tuning != nil }

// deployed tells whether MetalLB's workloads are meant to run.
func (s *state) deployed() bool { return s.allowed && len(s.foreign) == 0 && s.active() }

// conditions are the four conditions for what the reconcile found.
func (s *state) conditions(opts Options) status.Conditions {
	cs := status.NewConditions()
	degraded, reason, message := s.degraded(opts)
	cs.Set(status.Degraded, degraded, reason, message)
	available, reason, message := s.available(opts)
	cs.Set(status.Available, available, reason, message)
	if s.tracking.InFlight() && s.deployed() {
		cs.Set(status.Progressing, metav1.ConditionTrue, "RollingOut", s.progressMessage())
	}
	if s.hung {
		cs.Set(status.Upgradeable, metav1.ConditionFalse, ReasonRolloutHung, "A rollout of MetalLB is hung: fix it before upgrading.")
	}
	return cs
}

// degraded returns the Degraded condition's status, reason and message, the
// most pressing problem first.
func (s *state) degraded(opts Options) (metav1.ConditionStatus, string, string) {
	switch {
	case !s.allowed && s.active():
		return metav1.ConditionTrue, ReasonPlatformNotSupported, platformMessage(s.platform, opts.AllowedPlatforms)
	case len(s.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, foreignMessage(s.foreign, opts.Namespace)
	case s.invalid != nil:
		return metav1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("%v. Fix the spec: until then MetalLB keeps running as the last valid spec asked (status.appliedSpec).", s.invalid)
	case s.applyErr != nil:
		return metav1.ConditionTrue, ReasonApplyFailed, fmt.Sprintf("Applying MetalLB's manifests failed, will retry: %v", s.applyErr)
	case s.hung:
		return metav1.ConditionTrue, ReasonRolloutHung, fmt.Sprintf(
			"The rollout of %s has made no progress for %s (%s); the speaker is not ready on nodes: %s. "+
				"Look at their pods: kubectl get pods -n %s -o wide", s.tracking.Target, opts.HungAfter, s.progressMessage(),
			joinOr(s.hungNodes, "none named (pods not yet scheduled)"), opts.Namespace)
	}
	message := "MetalLB runs as configured."
	for _, o := range s.configs.elsewhere {
		message += " " + ignoredMessage(o, opts.Namespace) + "."
	}
	return metav1.ConditionFalse, ReasonAsExpected, message
}

// available tells whether MetalLB serves: its controller is available and a
// speaker runs on every node it should, but for those a rolling update may
// take down at once.
func (s *state) available(opts Options) (metav1.ConditionStatus, string, string) {
	switch {
	case !s.allowed:
		return metav1.ConditionTrue, ReasonPlatformNotSupported, "MetalLB is not deployed on this platform. " + platformMessage(s.platform, opts.AllowedPlatforms)
	case len(s.foreign) > 0:
		return metav1.ConditionTrue, ReasonForeignObjects, "Another installation runs MetalLB; this operator changes nothing."
	case !s.active():
		return metav1.ConditionTrue, "NotConfigured", fmt.Sprintf("MetalLB is not configured: create an IPAddressPool in %s to deploy it.", opts.Namespace)
	}
	controller, speaker := s.rollout("Deployment"), s.rollout("DaemonSet")
	switch {
	case controller == nil || speaker == nil:
		return metav1.ConditionFalse, "Deploying", "MetalLB's workloads are being created."
	case controller.Available == 0:
		return metav1.ConditionFalse, "ControllerUnavailable", "MetalLB's controller is not available: no address is handed out. " + controller.Message()
	case speaker.Desired == 0:
		return metav1.ConditionFalse, "NoSpeakers", "No node runs a speaker, so no address is announced: check spec.nodeSelector and spec.speakerTolerations of the MetalLB object against the nodes' labels and taints."
	case speaker.Unavailable() > s.allowedDown(opts, speaker):
		return metav1.ConditionFalse, "SpeakersUnavailable", "Speakers are missing on some nodes, whose addresses are not announced. " + speaker.Message()
	}
	return metav1.ConditionTrue, ReasonAsExpected, "MetalLB's controller is available and a speaker runs on every node."
}

// allowedDown is how many speakers may be unavailable: none, but during a
// rollout as many as it takes down at once.
func (s *state) allowedDown(opts Options, speaker *status.Rollout) int64 {
	if !s.tracking.InFlight() {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&s.maxUnavailable, int(speaker.Desired), true)
	if err != nil {
		return 1
	}
	return int64(n)
}

func (s *state) rollout(kind string) *status.Rollout {
	for i := range s.rollouts {
		if s.rollouts[i].Kind == kind {
			return &s.rollouts[i]
		}
	}
	return nil
}

func (s *state) progressMessage() string {
	parts := make([]string, len(s.rollouts))
	for i, r := range s.rollouts {
		parts[i] = r.Message()
	}
	return fmt.Sprintf("Rolling out %s: %s", s.tracking.Target, joinOr(parts, "creating the workloads"))
}

func platformMessage(p Platform, allowed []string) string {
	return fmt.Sprintf("MetalLB is not deployed: the platform is %s (from %s), and the operator deploys MetalLB only on %s. "+
		"To deploy it anyway, start the operator with --platform=BareMetal.", p.Type, p.Source, strings.Join(allowed, ", "))
}

func foreignMessage(foreign []apply.Foreign, namespace string) string {
	names := make([]string, len(foreign))
	for i, f := range foreign {
		names[i] = f.String()
	}
	return fmt.Sprintf("Another installation of MetalLB owns objects this operator would write: %s. Nothing was changed. "+
		"Remove that installation, or let this operator take its objects over: kubectl annotate namespace %s %s=true",
		strings.Join(names, "; "), namespace, AdoptAnnotation)
}

func ignoredMessage(o *metav1.PartialObjectMetadata, namespace string) string {
	return fmt.Sprintf("%s %s/%s is outside %s and is ignored", o.Kind, o.Namespace, o.Name, namespace)
}

// report records what the reconcile found: on the tuning object, if there is
// one, on the ClusterOperator, where that API exists, as metrics, and as
// Events when a condition changes.
func (r *Reconciler) report(ctx context.Context, st *state) error {
	cs := st.conditions(r.opts)
	status.Record("metallb", st.deployed(), st.rollouts, cs)
	r.tellTransitions(st, cs)
	if r.clusterOperator != nil {
		if _, err := r.clusterOperator.Write(ctx, r.clusterOperatorReport(st, cs)); err != nil {
			return err
		}
	}
	if st.tuning == nil {
		return nil
	}
	obj := st.tuning
	s := obj.Status.DeepCopy()
	s.ObservedGeneration = obj.Generation
	cs.ApplyTo(&s.Conditions, obj.Generation)
	s.Version = st.tracking.Version
	if st.specValid && !sameSpec(s.AppliedSpec, &obj.Spec) {
		s.AppliedSpec = appliedSpec(&obj.Spec)
	}
	return r.writeStatus(ctx, obj, s)
}

// clusterOperatorReport is the ClusterOperator's view: the conditions, the
// versions every part runs (none until a first rollout finishes), and where
// to look.
func (r *Reconciler) clusterOperatorReport(st *state, cs status.Conditions) status.Report {
	report := status.Report{Conditions: cs, RelatedObjects: []configv1.ObjectReference{
		{Resource: "namespaces", Name: r.opts.Namespace},
		{Group: v1beta1.GroupVersion.Group, Resource: "metallbs", Namespace: r.opts.Namespace, Name: ObjectName},
		{Group: "apps", Resource: "deployments", Namespace: r.opts.Namespace, Name: "controller"},
		{Group: "apps", Resource: "daemonsets", Namespace: r.opts.Namespace, Name: "speaker"},
	}}
	if v := st.tracking.Version; v != "" {
		report.Versions = []configv1.OperandVersion{{Name: "operator", Version: v}, {Name: "metallb", Version: v}}
	}
	return report
}

// tellTransitions records an Event for each condition that changed since the
// last reconcile, on the tuning object, or else on the ClusterOperator.
func (r *Reconciler) tellTransitions(st *state, cs status.Conditions) {
	last := r.lastConditions
	r.lastConditions = &cs
	if last == nil {
		return // just started: what is shown already says it
	}
	var regarding runtime.Object
	switch {
	case st.tuning != nil:
		regarding = st.tuning
	case r.clusterOperator != nil:
		co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: r.opts.ClusterOperator}}
		co.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterOperator"))
		regarding = co
	default:
		return
	}
	for _, c := range cs {
		old := last.Get(c.Type)
		if old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		eventType := corev1.EventTypeNormal
		if c.Bad() {
			eventType = corev1.EventTypeWarning
		}
		r.events.Eventf(regarding, nil, eventType, c.Type+string(c.Status), "Report", "%s: %s", c.Reason, c.Message)
	}
}

// reportIgnored tells, on a MetalLB object that does not count, why.
func (r *Reconciler) reportIgnored(ctx context.Context, obj *v1beta1.MetalLB) error {
	s := obj.Status.DeepCopy()
	s.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type: status.Degraded, Status: metav1.ConditionTrue, Reason: ReasonIgnoredObject, ObservedGeneration: obj.Generation,
		Message: fmt.Sprintf("This object is ignored: only the MetalLB named %q in namespace %q configures MetalLB. Move its spec there and delete this one.",
			ObjectName, r.opts.Namespace),
	})
	return r.writeStatus(ctx, obj, s)
}

// writeStatus writes status only when it changed, so that an idle cluster sees
// no writes.
func (r *Reconciler) writeStatus(ctx context.Context, obj *v1beta1.MetalLB, next *v1beta1.MetalLBStatus) error {
	if equality.Semantic.DeepEqual(&obj.Status, next) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.Status = *next
	return r.client.Status().Patch(ctx, obj, patch)
}

// appliedSpec records a valid spec for status.appliedSpec.
func appliedSpec(spec *v1beta1.MetalLBSpec) *runtime.RawExtension {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	return &runtime.RawExtension{Raw: raw}
}

// sameSpec compares a recorded spec by content: the API server hands it back
// re-encoded, so its bytes differ from what was written.
func sameSpec(recorded *runtime.RawExtension, spec *v1beta1.MetalLBSpec) bool {
	if recorded == nil {
		return false
	}
	var got v1beta1.MetalLBSpec
	return json.Unmarshal(recorded.Raw, &got) == nil && equality.Semantic.DeepEqual(&got, spec)
}

// tellPlatform tells each configuration object, and the tuning object, why
// MetalLB is not deployed for it.
func (r *Reconciler) tellPlatform(ctx context.Context, st *state) error {
	found, err := r.configObjects(ctx, r.opts.Namespace)
	if meta.IsNoMatchError(err) {
		err = nil // MetalLB's CRDs are not installed: users cannot configure it
	} else if err == nil {
		err = r.startConfigWatches() // they are: hear of new configuration
	}
	if err != nil {
		return err
	}
	note := platformMessage(st.platform, r.opts.AllowedPlatforms)
	for _, o := range found.inNamespace {
		r.tellOnce(o, corev1.EventTypeWarning, ReasonPlatformNotSupported, note)
	}
	if st.tuning != nil {
		r.tellOnce(st.tuning, corev1.EventTypeWarning, ReasonPlatformNotSupported, note)
	}
	return nil
}

// tellIgnored tells each configuration object outside MetalLB's namespace that
// MetalLB does not read it.
func (r *Reconciler) tellIgnored(c configs) {
	for _, o := range c.elsewhere {
		r.tellOnce(o, corev1.EventTypeWarning, "Ignored",
			ignoredMessage(o, r.opts.Namespace)+": MetalLB reads its configuration only from "+r.opts.Namespace)
	}
}

func (r *Reconciler) tellForeign(foreign []apply.Foreign) {
	for _, f := range foreign {
		r.tellOnce(f.Object, corev1.EventTypeWarning, "NotManaged", foreignMessage([]apply.Foreign{f}, r.opts.Namespace))
	}
}

// tellChanges explains the writes users would wonder about.
func (r *Reconciler) tellChanges(changes []apply.Change) {
	firstActivation := slices.ContainsFunc(changes, func(c apply.Change) bool {
		return c.Created && c.Object.GetKind() == "DaemonSet"
	})
	for _, c := range changes {
		if c.Object.GetKind() != "Secret" || c.Object.GetName() != memberlistSecret || !c.Created {
			continue
		}
		if firstActivation {
			r.events.Eventf(c.Object, nil, corev1.EventTypeNormal, "MemberlistKeyGenerated", "Create", "Generated the speakers' memberlist key.")
			continue
		}
		r.events.Eventf(c.Object, nil, corev1.EventTypeWarning, "MemberlistKeyRegenerated", "Create",
			"The memberlist Secret was missing: generated a new key. Speakers started before now still use the old one; "+
				"restart them so that they form one cluster again: kubectl rollout restart daemonset/speaker -n %s", r.opts.Namespace)
	}
}

// tellOnce records an Event on an object, unless this process already told it
// the same thing.
func (r *Reconciler) tellOnce(o client.Object, eventType, reason, note string) {
	key := string(o.GetUID())
	if key == "" {
		key = apply.Describe(o)
	}
	if r.told[key] == reason+note {
		return
	}
	r.told[key] = reason + note
	r.events.Eventf(o, nil, eventType, reason, "Reconcile", "%s", note)
}
