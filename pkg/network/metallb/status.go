package metallb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
)

// Condition types and reasons on the MetalLB object.
const (
	ConditionDegraded = "Degraded"

	ReasonAsExpected           = "AsExpected"
	ReasonPlatformNotSupported = "PlatformNotSupported"
	ReasonForeignObjects       = "ForeignObjects"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonIgnoredObject        = "IgnoredObject"
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
	applyErr  error
}

// active tells whether the user asked for MetalLB.
func (s *state) active() bool { return len(s.configs.inNamespace) > 0 || s.tuning != nil }

// degraded is the Degraded condition for what the reconcile found, the most
// pressing problem first.
func (s *state) degraded(opts Options) metav1.Condition {
	c := metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue}
	switch {
	case !s.allowed:
		c.Reason, c.Message = ReasonPlatformNotSupported, platformMessage(s.platform, opts.AllowedPlatforms)
	case len(s.foreign) > 0:
		c.Reason, c.Message = ReasonForeignObjects, foreignMessage(s.foreign, opts.Namespace)
	case s.invalid != nil:
		c.Reason = ReasonInvalidConfiguration
		c.Message = fmt.Sprintf("%v. Fix the spec: until then MetalLB keeps running as the last valid spec asked (status.appliedSpec).", s.invalid)
	case s.applyErr != nil:
		c.Reason, c.Message = ReasonApplyFailed, fmt.Sprintf("Applying MetalLB's manifests failed, will retry: %v", s.applyErr)
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonAsExpected, "MetalLB runs as the spec asks."
		for _, o := range s.configs.elsewhere {
			c.Message += " " + ignoredMessage(o, opts.Namespace) + "."
		}
	}
	return c
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

// report records on the tuning object, if there is one, what the reconcile found.
func (r *Reconciler) report(ctx context.Context, st *state) error {
	if st.tuning == nil {
		return nil
	}
	obj := st.tuning
	status := obj.Status.DeepCopy()
	status.ObservedGeneration = obj.Generation
	degraded := st.degraded(r.opts)
	degraded.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&status.Conditions, degraded)
	if st.specValid && !sameSpec(status.AppliedSpec, &obj.Spec) {
		status.AppliedSpec = appliedSpec(&obj.Spec)
	}
	return r.writeStatus(ctx, obj, status)
}

// reportIgnored tells, on a MetalLB object that does not count, why.
func (r *Reconciler) reportIgnored(ctx context.Context, obj *v1beta1.MetalLB) error {
	status := obj.Status.DeepCopy()
	status.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: ReasonIgnoredObject, ObservedGeneration: obj.Generation,
		Message: fmt.Sprintf("This object is ignored: only the MetalLB named %q in namespace %q configures MetalLB. Move its spec there and delete this one.",
			ObjectName, r.opts.Namespace),
	})
	return r.writeStatus(ctx, obj, status)
}

// writeStatus writes status only when it changed, so that an idle cluster sees
// no writes.
func (r *Reconciler) writeStatus(ctx context.Context, obj *v1beta1.MetalLB, status *v1beta1.MetalLBStatus) error {
	if equality.Semantic.DeepEqual(&obj.Status, status) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.Status = *status
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
	if last, ok := r.told.Load(key); ok && last == reason+note {
		return
	}
	r.told.Store(key, reason+note)
	r.events.Eventf(o, nil, eventType, reason, "Reconcile", "%s", note)
}
