package metallb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// act carries out the plan: it applies, prunes, writes the status and gives
// the Events, in that order. An error stops the writes that follow it, and
// the status written reports it. The transition Events are given once the
// status they compare with (the tuning object's, or else the
// ClusterOperator's) is written: a later write that fails does not lose them,
// and one that failed does not repeat them on the next reconcile.
func (r *Reconciler) act(ctx context.Context, s *Snapshot, p *Plan) error {
	if p.NodeAddress != nil {
		// First: Services handed over to MetalLB lose the node addresses while
		// its controller starts.
		r.nodeAddress.SetScope(*p.NodeAddress)
	}
	changes, err := r.write(ctx, s, p)
	report := p.Report(err)
	status.Record("metallb", report.Deployed, report.Rollouts, report.Conditions)
	recorded, serr := r.writeStatus(ctx, s, p, report)
	if !recorded {
		report.Transitions = nil // the reconcile that records them gives them
	}
	r.tell(p, report.Transitions, changes)
	return errors.Join(p.failed(err), serr)
}

// write applies and prunes what the plan says, and starts the watches it asks
// for once their CRDs are applied.
func (r *Reconciler) write(ctx context.Context, s *Snapshot, p *Plan) ([]apply.Change, error) {
	for _, f := range p.Adopt {
		if err := r.adopt(ctx, f); err != nil {
			return nil, err
		}
	}
	if p.ConversionOff != nil {
		if err := r.conversionOff(ctx, p.ConversionOff); err != nil {
			return nil, err
		}
	}
	applier := &apply.Applier{Client: r.client, FieldOwner: FieldOwner}
	changes, err := applier.Write(ctx, p.Apply, func(o *unstructured.Unstructured) bool { return s.Owned[apply.KeyOf(o)] != nil })
	if err != nil {
		return changes, err
	}
	if p.WatchConfigs {
		if err := r.watchConfigs(); err != nil {
			return changes, err
		}
	}
	return changes, applier.Delete(ctx, p.Prune)
}

// adopt labels another installation's object as the module's and removes
// its owner references, so that the garbage collector does not delete it with
// the installation it came from: the memberlist key, create-only, would
// otherwise go with the other installation's controller Deployment.
func (r *Reconciler) adopt(ctx context.Context, f apply.Foreign) error {
	err := r.mergePatch(ctx, f.Object, f.Live.UID, map[string]any{"metadata": map[string]any{"labels": ownership, "ownerReferences": nil}})
	if err != nil {
		return fmt.Errorf("adopting %s: %w", apply.Describe(f.Object), err)
	}
	return nil
}

// conversionOff takes the BGPPeer CRD's conversion webhook away, with the CA
// bundle MetalLB's controller put in it: a server-side apply can only give up
// the fields the operator owns, and with None the API server refuses any
// webhook stanza left.
func (r *Reconciler) conversionOff(ctx context.Context, crd *unstructured.Unstructured) error {
	err := r.mergePatch(ctx, crd, crd.GetUID(), map[string]any{"spec": map[string]any{
		"conversion": map[string]any{"strategy": conversionNone, "webhook": nil},
	}})
	if err != nil {
		return fmt.Errorf("turning off the conversion webhook of %s: %w", apply.Describe(crd), err)
	}
	return nil
}

// mergePatch patches the object of o's kind and name with a JSON merge patch,
// as the module's field manager. The UID in the patch makes it fail on an
// object replaced since it was read.
func (r *Reconciler) mergePatch(ctx context.Context, o *unstructured.Unstructured, uid types.UID, patch map[string]any) error {
	metadata, _ := patch["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		patch["metadata"] = metadata
	}
	metadata["uid"] = uid
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	obj := emptyObject(o.GroupVersionKind())
	obj.SetNamespace(o.GetNamespace())
	obj.SetName(o.GetName())
	return r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), client.FieldOwner(FieldOwner))
}

// writeStatus writes what changed of the status: the tracking, the MetalLB
// objects' status, the ClusterOperator. It tells whether the status the
// transitions compare with is recorded.
func (r *Reconciler) writeStatus(ctx context.Context, s *Snapshot, p *Plan, report Report) (bool, error) {
	if p.Tracking != nil {
		if err := r.saveTracking(ctx, *p.Tracking, trackingRead(s, p)); err != nil {
			return false, err
		}
	}
	writes := p.Statuses
	if report.Tuning != nil {
		writes = append(writes, StatusWrite{Object: s.Tuning, Status: report.Tuning})
	}
	for _, w := range writes {
		if err := r.patchStatus(ctx, w.Object, w.Status); err != nil {
			return false, err
		}
	}
	tuningRecorded := p.found.statusOnTuning() // the transitions compare with it
	if r.clusterOperator == nil {
		return tuningRecorded, nil
	}
	_, err := r.clusterOperator.Write(ctx, s.ClusterOperator, report.ClusterOperator)
	return tuningRecorded || err == nil, err
}

// trackingRead returns the resourceVersion of the namespace the tracking was
// read from, or "" when that read says nothing of the namespace as it is
// now: it was not there, or this reconcile wrote it.
func trackingRead(s *Snapshot, p *Plan) string {
	ns := s.owned(namespaceKind, "", p.opts.Namespace)
	if ns == nil || slices.ContainsFunc(p.Apply, func(o *unstructured.Unstructured) bool { return o.GetKind() == namespaceKind.Kind }) {
		return ""
	}
	return ns.GetResourceVersion()
}

// saveTracking writes the tracking to MetalLB's namespace. Given the
// resourceVersion it was read at, it writes only over that version: a cache
// behind the last write (as after an API server outage) gives a conflict,
// and a reconcile that reads the newer tracking, instead of a tracking worked
// out from the older one (with its rollout's start time lost).
func (r *Reconciler) saveTracking(ctx context.Context, t status.Tracking, readAt string) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	metadata := map[string]any{"annotations": map[string]string{TrackingAnnotation: string(data)}}
	if readAt != "" {
		metadata["resourceVersion"] = readAt
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	ns := emptyObject(namespaceKind)
	ns.SetName(r.opts.Namespace)
	return r.client.Patch(ctx, ns, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner+"-status"))
}

// patchStatus writes a MetalLB object's status, unless the object changed
// since it was read.
func (r *Reconciler) patchStatus(ctx context.Context, obj *v1beta1.MetalLB, next *v1beta1.MetalLBStatus) error {
	patch := client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})
	updated := obj.DeepCopy()
	updated.Status = *next
	return r.client.Status().Patch(ctx, updated, patch)
}
