package metallb

import (
	"encoding/json"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Report is the status a reconcile writes, once act knows how its writes
// went: on the tuning object, the ClusterOperator and the metrics, and the
// Events on the conditions that changed.
type Report struct {
	Conditions status.Conditions
	// Tuning is the tuning object's next status; nil when there is no tuning
	// object or its status stays as it is.
	Tuning          *v1beta1.MetalLBStatus
	ClusterOperator status.Report
	Deployed        bool
	Rollouts        []status.Rollout
	Transitions     []Event
}

// Report is the status for what the plan found and act's error, if any.
func (p *Plan) Report(actErr error) Report {
	f := &p.found
	cs := f.conditions(p.opts, p.failed(actErr))
	return Report{
		Conditions:      cs,
		Tuning:          tuningStatus(f, cs),
		ClusterOperator: clusterOperatorReport(f, cs, p.opts.Namespace),
		Deployed:        f.deployed(),
		Rollouts:        f.rollouts,
		Transitions:     transitionEvents(f, cs, p.opts.ClusterOperator),
	}
}

// tuningStatus returns the tuning object's status as it should be, or nil
// when it already is, so that an idle cluster sees no writes.
func tuningStatus(f *findings, cs status.Conditions) *v1beta1.MetalLBStatus {
	obj := f.tuning
	if !f.statusOnTuning() {
		return nil
	}
	s := obj.Status.DeepCopy()
	s.ObservedGeneration = obj.Generation
	cs.ApplyTo(&s.Conditions, obj.Generation, f.now)
	s.Version = f.tracking.Version
	if f.specValid && !sameSpec(s.AppliedSpec, &obj.Spec) {
		s.AppliedSpec = appliedSpec(&obj.Spec)
	}
	if equality.Semantic.DeepEqual(&obj.Status, s) {
		return nil
	}
	return s
}

// clusterOperatorReport is the ClusterOperator's view: the conditions, the
// versions every part runs (none until a first rollout finishes), and where
// to look.
func clusterOperatorReport(f *findings, cs status.Conditions, namespace string) status.Report {
	report := status.Report{Conditions: cs, RelatedObjects: []configv1.ObjectReference{
		{Resource: "namespaces", Name: namespace},
		{Group: v1beta1.GroupVersion.Group, Resource: "metallbs", Namespace: namespace, Name: ObjectName},
		{Group: "apps", Resource: "deployments", Namespace: namespace, Name: controllerName},
		{Group: "apps", Resource: "daemonsets", Namespace: namespace, Name: speakerName},
	}}
	if v := f.tracking.Version; v != "" {
		report.Versions = []configv1.OperandVersion{{Name: "operator", Version: v}, {Name: "metallb", Version: v}}
	}
	return report
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
				ObjectName, namespace),
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
