package metallb

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Condition types and reasons on the MetalLB object.
const (
	ConditionDegraded = "Degraded"

	ReasonAsExpected           = "AsExpected"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonIgnoredObject        = "IgnoredObject"
)

// reportStatus records on the tuning object whether its spec was applied.
func (r *Reconciler) reportStatus(ctx context.Context, obj *v1beta1.MetalLB, invalid, applyErr error) error {
	status := obj.Status.DeepCopy()
	status.ObservedGeneration = obj.Generation
	degraded := metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonAsExpected,
		Message: "MetalLB runs as the spec asks", ObservedGeneration: obj.Generation}
	switch {
	case invalid != nil:
		degraded.Status, degraded.Reason = metav1.ConditionTrue, ReasonInvalidConfiguration
		degraded.Message = fmt.Sprintf("%v. Fix the spec: until then MetalLB keeps running as the last valid spec asked (status.appliedSpec).", invalid)
	case applyErr != nil:
		degraded.Status, degraded.Reason = metav1.ConditionTrue, ReasonApplyFailed
		degraded.Message = fmt.Sprintf("Applying MetalLB's manifests failed, will retry: %v", applyErr)
	case !sameSpec(status.AppliedSpec, &obj.Spec):
		status.AppliedSpec = appliedSpec(&obj.Spec)
	}
	meta.SetStatusCondition(&status.Conditions, degraded)
	return r.writeStatus(ctx, obj, status)
}

// reportIgnored tells, on a MetalLB object that does not count, why.
func (r *Reconciler) reportIgnored(ctx context.Context, obj *v1beta1.MetalLB) error {
	status := obj.Status.DeepCopy()
	status.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: ReasonIgnoredObject, ObservedGeneration: obj.Generation,
		Message: fmt.Sprintf("This object is ignored: only the MetalLB named %q in namespace %q configures MetalLB. Move its spec there and delete this one.",
			ObjectName, r.Namespace),
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
	return r.Client.Status().Patch(ctx, obj, patch)
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
