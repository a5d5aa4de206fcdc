package publish

import (
	"context"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// ClusterOperator writes an operand's status to the cluster's ClusterOperator
// object of that name, as OpenShift's cluster-version operator reads it.
type ClusterOperator struct {
	Client client.Client
	Name   string
	Clock  clock.PassiveClock
	// OperatorNamespace, where the operator runs, is named first in
	// relatedObjects: must-gather then collects the operator's own logs
	// beside its operand's.
	OperatorNamespace string
}

// Get returns the ClusterOperator, or nil when it, or its API, does not exist.
func (w *ClusterOperator) Get(ctx context.Context) (*configv1.ClusterOperator, error) {
	co := &configv1.ClusterOperator{}
	err := w.Client.Get(ctx, client.ObjectKey{Name: w.Name}, co)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	return co, err
}

// Write records the report on co, the ClusterOperator as Get returned it. It
// writes only what changed, and nothing when co is nil: the cluster-version
// operator creates the ClusterOperator from the release's manifests, and
// again if it is deleted, and the operator holds no permission to create
// one. Then, and where the API does not exist, it returns false.
func (w *ClusterOperator) Write(ctx context.Context, co *configv1.ClusterOperator, r status.OperandStatus) (bool, error) {
	if co == nil {
		return false, nil
	}
	next := w.next(co, r)
	if equality.Semantic.DeepEqual(&co.Status, next) {
		return true, nil
	}
	// A merge patch of the status, not an update: co may come from a cache
	// not yet holding the operator's own last write, which an update's
	// resourceVersion would have refused (409), and written again after a
	// backoff; the status is the operator's alone.
	patch := client.MergeFrom(co)
	updated := co.DeepCopy() // co may be the cache's
	updated.Status = *next
	return true, w.Client.Status().Patch(ctx, updated, patch)
}

// Changes tells whether Write would write the report on co.
func (w *ClusterOperator) Changes(co *configv1.ClusterOperator, r status.OperandStatus) bool {
	return co != nil && !equality.Semantic.DeepEqual(&co.Status, w.next(co, r))
}

// next is co's status with the report on it.
func (w *ClusterOperator) next(co *configv1.ClusterOperator, r status.OperandStatus) *configv1.ClusterOperatorStatus {
	next := co.Status.DeepCopy()
	for _, c := range r.Conditions {
		v1helpers.SetStatusCondition(&next.Conditions, configv1.ClusterOperatorStatusCondition{
			Type: configv1.ClusterStatusConditionType(c.Type), Status: configv1.ConditionStatus(c.Status),
			Reason: c.Reason, Message: c.Message,
		}, w.Clock)
	}
	if r.Versions != nil {
		next.Versions = r.Versions
	}
	next.RelatedObjects = r.RelatedObjects
	if w.OperatorNamespace != "" {
		own := configv1.ObjectReference{Resource: "namespaces", Name: w.OperatorNamespace}
		next.RelatedObjects = append([]configv1.ObjectReference{own}, slices.DeleteFunc(slices.Clone(r.RelatedObjects),
			func(ref configv1.ObjectReference) bool { return ref == own })...)
	}
	return next
}
