package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Report is what the plan found, and act's error, if any, say.
func (p *Plan) Report(actErr error) Report {
	cs := p.conditions(p.Failed(actErr))
	return Report{
		Conditions:      cs,
		MetalLB:         p.metallbStatus(cs, !errors.As(actErr, new(*RenderingRefused))),
		ClusterOperator: clusterOperatorStatus(p.tracking, cs, p.opts.Namespace, p.rendered),
		Deployed:        p.deployed(),
		Rollouts:        p.rollouts,
		Transitions:     p.transitionEvents(cs),
		OnMetalLB:       p.statusOnMetalLB(),
	}
}

// RenderingRefused is act's error when the API server refused an object of
// the rendering in a dry run, before any write: the object, and what the API
// server said (the field and why).
type RenderingRefused struct{ Object, Message string }

func (r *RenderingRefused) Error() string {
	return fmt.Sprintf("The API server refuses %s as rendered from the MetalLB object's spec: %s", r.Object, r.Message)
}

// Failed joins planning's failure with act's error.
func (p *Plan) Failed(actErr error) error { return errors.Join(p.failure, actErr) }

// metallbVersion is the version the MetalLB object reports: the version
// tracked, but none while the object's first rollout is in flight. Tracking
// reports the release as soon as no workload is wanted (the ClusterOperator
// must, inactive or not), so that on activation it holds the release before
// any speaker runs it, where the object has never reported a version.
func metallbVersion(reported string, t status.Tracking) string {
	if reported == "" && t.InFlight() {
		return ""
	}
	return t.Version
}

// metallbStatus returns the MetalLB object's status as it should be, or nil
// when it already is, so that an idle cluster sees no writes. The spec is
// recorded as applied unless act found its rendering refused (applied false).
func (p *Plan) metallbStatus(cs status.Conditions, applied bool) *v1beta1.MetalLBStatus {
	obj := p.metallb
	if !p.statusOnMetalLB() {
		return nil
	}
	s := obj.Status.DeepCopy()
	s.ObservedGeneration = obj.Generation
	cs.ApplyTo(&s.Conditions, obj.Generation, p.now)
	s.Version = metallbVersion(obj.Status.Version, p.tracking)
	if p.specValid && applied && !sameSpec(s.AppliedSpec, &obj.Spec) {
		s.AppliedSpec = appliedSpec(&obj.Spec)
	}
	reportMaintenance(s, p.maintenanceReport, obj.Generation, p.now)
	if equality.Semantic.DeepEqual(&obj.Status, s) {
		return nil
	}
	return s
}

// clusterOperatorStatus is the ClusterOperator's view: the conditions, the
// versions every part runs (none until a first rollout finishes), and where
// to look.
func clusterOperatorStatus(tracking status.Tracking, cs status.Conditions, namespace string, rendered []*unstructured.Unstructured) status.OperandStatus {
	report := status.OperandStatus{Conditions: cs, RelatedObjects: relatedObjects(namespace, rendered)}
	if v := tracking.Version; v != "" {
		report.Versions = []configv1.OperandVersion{{Name: "operator", Version: v}, {Name: "metallb", Version: v}}
	}
	return report
}

// relatedObjects name what `oc adm inspect clusteroperator/metallb`, which
// must-gather runs, collects: MetalLB's namespace (its pods and their logs
// with it), the MetalLB objects there, every object the module renders, and
// every object of the kinds its CRDs define, in the namespace for namespaced
// kinds (a reference with no name is all of them): the pools, advertisements
// and peers, MetalLB's and frr-k8s's reports.
func relatedObjects(namespace string, rendered []*unstructured.Unstructured) []configv1.ObjectReference {
	refs := []configv1.ObjectReference{
		{Resource: "namespaces", Name: namespace},
		{Group: v1beta1.GroupVersion.Group, Resource: "metallbs", Namespace: namespace},
	}
	add := func(ref configv1.ObjectReference) {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	for _, o := range rendered {
		gvk := o.GroupVersionKind()
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		add(configv1.ObjectReference{Group: gvk.Group, Resource: plural.Resource, Namespace: o.GetNamespace(), Name: o.GetName()})
		if gvk == objects.CustomResourceDefinition {
			if ref, ok := everyObjectOf(o, namespace); ok {
				add(ref)
			}
		}
	}
	return refs
}

// everyObjectOf is the reference to every object of the kind a CRD defines:
// in namespace if the kind is namespaced (frr-k8s's FRRNodeStates are not).
func everyObjectOf(crd *unstructured.Unstructured, namespace string) (configv1.ObjectReference, bool) {
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	if plural == "" {
		return configv1.ObjectReference{}, false
	}
	ref := configv1.ObjectReference{Group: group, Resource: plural}
	if scope == "Namespaced" {
		ref.Namespace = namespace
	}
	return ref, true
}

// ignoredStatuses tell, on each MetalLB object that does not count, why; only
// those whose status changes.
func ignoredStatuses(ignored []*v1beta1.MetalLB, namespace string, now time.Time) []StatusWrite {
	var writes []StatusWrite
	for _, obj := range ignored {
		s := obj.Status.DeepCopy()
		s.ObservedGeneration = obj.Generation
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{
			Type: status.Degraded, Status: metav1.ConditionTrue, Reason: ReasonIgnored, ObservedGeneration: obj.Generation,
			LastTransitionTime: metav1.NewTime(now),
			Message: fmt.Sprintf("This object is ignored: only the MetalLB named %q in namespace %q configures MetalLB. Move its spec there and delete this one.",
				manifests.ObjectName, namespace),
		})
		if !equality.Semantic.DeepEqual(&obj.Status, s) {
			writes = append(writes, StatusWrite{Object: obj, Status: s})
		}
	}
	return writes
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
