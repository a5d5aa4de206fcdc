package metallb

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// publish writes what the report says: the metrics, the tracking, the
// MetalLB objects' status and the ClusterOperator, in that order, then gives
// the Events. An error stops the writes that follow it. The transition
// Events are given once the status they compare with (the MetalLB object's,
// or else the ClusterOperator's) is written: a later write that fails does
// not lose them, and one that failed does not repeat them on the next
// reconcile. It returns how long the statuses' writes are held back.
func (r *Reconciler) publish(ctx context.Context, s *plan.Snapshot, p *plan.Plan, report plan.Report, changes []apply.Change) (time.Duration, error) {
	r.reporter.Record(report.Deployed, report.Rollouts, report.Conditions)
	recorded, held, err := r.writeStatus(ctx, s, p, report)
	if !recorded {
		report.Transitions = nil // the reconcile that records them gives them
	}
	r.tell(p, report.Transitions, changes)
	return held, err
}

// writeStatus writes what changed of the status, unless the statuses were
// written less than StatusEvery ago: then it tells how long they wait. It
// tells whether the status the transitions compare with is recorded.
func (r *Reconciler) writeStatus(ctx context.Context, s *plan.Snapshot, p *plan.Plan, report plan.Report) (bool, time.Duration, error) {
	if p.Tracking != nil {
		if err := r.saveTracking(ctx, *p.Tracking, r.trackingRead(s, p)); err != nil {
			return false, 0, err
		}
	}
	writes := p.Statuses
	if report.MetalLB != nil {
		writes = append(writes, plan.StatusWrite{Object: s.MetalLB, Status: report.MetalLB})
	}
	co := r.reporter.ClusterOperator
	coChanges := co != nil && co.Changes(s.ClusterOperator, report.ClusterOperator)
	if held := StatusEvery - r.pace.Since(r.statusWritten); held > 0 && (len(writes) > 0 || coChanges) {
		return false, held, nil
	}
	for _, w := range writes {
		if err := r.patchStatus(ctx, w.Object, w.Status); err != nil {
			return false, 0, err
		}
	}
	if !coChanges {
		return report.OnMetalLB || co != nil, 0, nil
	}
	_, err := co.Write(ctx, s.ClusterOperator, report.ClusterOperator)
	r.statusWritten = r.pace.Now()
	return report.OnMetalLB || err == nil, 0, err
}

// trackingRead returns the resourceVersion of the namespace the tracking was
// read from, or "" when that read says nothing of the namespace as it is
// now: it was not there, or this reconcile wrote it.
func (r *Reconciler) trackingRead(s *plan.Snapshot, p *plan.Plan) string {
	ns := s.OwnedObject(objects.Namespace, "", r.opts.Namespace)
	if ns == nil || slices.ContainsFunc(p.Apply, func(o *unstructured.Unstructured) bool { return o.GroupVersionKind() == objects.Namespace }) {
		return ""
	}
	return s.TrackingVersion
}

// trackingWrite is the tracking this operator last wrote, or read from the
// API server after a conflict, and the namespace's resourceVersion then.
type trackingWrite struct {
	tracking        status.Tracking
	resourceVersion string
}

// newerThan tells whether the write is newer than the namespace read at
// resourceVersion: the cache has not caught up with it. Right after a start
// it was a second behind the operator's own writes, and the tracking written
// over the cached version was refused (409), the reconcile failed and
// MetalLB's activation waited 2 s (the side-by-side run of 2026-12-07).
func (w trackingWrite) newerThan(resourceVersion string) bool {
	if w.resourceVersion == "" {
		return false
	}
	order, err := resourceversion.CompareResourceVersion(w.resourceVersion, resourceVersion)
	return err == nil && order > 0
}

// saveTracking writes the tracking to MetalLB's namespace. Given the
// resourceVersion it was read at, it writes only over that version: a cache
// behind another's last write (as after an API server outage) gives a
// conflict, and a reconcile that reads the newer tracking, instead of a
// tracking worked out from the older one (with its rollout's start time
// lost). Its own last write it remembers (trackingWrite), not waiting for the
// cache.
func (r *Reconciler) saveTracking(ctx context.Context, t status.Tracking, readAt string) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	metadata := map[string]any{"annotations": map[string]string{manifests.TrackingAnnotation: string(data)}}
	if readAt != "" {
		metadata["resourceVersion"] = readAt
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	ns := objects.Empty(objects.Namespace)
	ns.SetName(r.opts.Namespace)
	if err := r.client.Patch(ctx, ns, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(manifests.FieldOwner+"-status")); err != nil {
		if apierrors.IsConflict(err) {
			r.readTrackingLive(ctx)
		}
		return err
	}
	r.tracked = trackingWrite{tracking: t, resourceVersion: ns.GetResourceVersion()}
	return nil
}

// readTrackingLive reads the namespace from the API server once a write of
// the tracking was refused for a conflict: the cache is behind a write (the
// operator's own whose answer was lost, or another's), and every write over
// it would be refused until it caught up: 3.5 s of refusals, the whole of a
// 50-node rollout unreported, in the faults' upgrade story (CI run 99). The
// next reconcile works from what it reads, as from its own write. A read
// that fails leaves the cache to it.
func (r *Reconciler) readTrackingLive(ctx context.Context) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(objects.Namespace)
	if err := r.apiReader.Get(ctx, client.ObjectKey{Name: r.opts.Namespace}, ns); err == nil {
		r.tracked = trackingWrite{tracking: trackingOf(ns), resourceVersion: ns.GetResourceVersion()}
	}
}

// trackingOf reads the tracking kept on MetalLB's namespace; a mangled
// annotation starts tracking afresh.
func trackingOf(ns metav1.Object) status.Tracking {
	var t status.Tracking
	if data := ns.GetAnnotations()[manifests.TrackingAnnotation]; data != "" {
		_ = json.Unmarshal([]byte(data), &t)
	}
	return t
}

// patchStatus writes a MetalLB object's status, unless the object changed
// since it was read.
func (r *Reconciler) patchStatus(ctx context.Context, obj *v1beta1.MetalLB, next *v1beta1.MetalLBStatus) error {
	patch := client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})
	updated := obj.DeepCopy()
	updated.Status = *next
	r.statusWritten = r.pace.Now()
	return r.client.Status().Patch(ctx, updated, patch)
}

// madeUnanswered are the objects with an Event on their creation
// (plan.OnCreate) that a failed write made though its answer never came
// (the connection lost after the API server answered): read back, each holds
// the data written, which for the memberlist key, random, only this write
// could have put there. Their Events (MemberlistKeyRegenerated: restart the
// speakers) would otherwise be lost, the next reconcile finding the object
// there.
func (r *Reconciler) madeUnanswered(ctx context.Context, p *plan.Plan, changes []apply.Change) []apply.Change {
	var out []apply.Change
	for _, e := range p.OnCreate {
		want, ok := e.Regarding.(*unstructured.Unstructured)
		if !ok || slices.ContainsFunc(changes, func(c apply.Change) bool { return objects.KeyOf(c.Object) == objects.KeyOf(want) }) {
			continue
		}
		// Listed by name: the operator may list its namespace's Secrets, not get them.
		live := &unstructured.UnstructuredList{}
		live.SetGroupVersionKind(want.GroupVersionKind().GroupVersion().WithKind(want.GetKind() + "List"))
		err := r.apiReader.List(ctx, live, client.InNamespace(want.GetNamespace()), client.MatchingFields{"metadata.name": want.GetName()})
		if err != nil || len(live.Items) == 0 {
			continue // not made, or not readable now: the next reconcile tries again
		}
		if reflect.DeepEqual(live.Items[0].Object["data"], want.Object["data"]) {
			out = append(out, apply.Change{Object: want, Created: true})
		}
	}
	return out
}

// tell gives the Events of a reconcile: the transitions, the OnCreate Events
// of objects act created, and the notices not given since the last plan
// that had them (the memory holds the last plan's notices only, so it stays
// as small as they are).
func (r *Reconciler) tell(p *plan.Plan, transitions []plan.Event, changes []apply.Change) {
	events := transitions
	for _, e := range p.OnCreate {
		for _, c := range changes {
			if c.Created && objects.KeyOf(c.Object) == objects.KeyOf(e.Regarding) {
				events = append(events, e)
			}
		}
	}
	told := make(map[string]bool, len(p.Notices))
	for _, e := range p.Notices {
		told[e.Key()] = true
		if !r.told[e.Key()] {
			events = append(events, e)
		}
	}
	r.told = told
	for _, e := range events {
		r.events.Eventf(e.Regarding, nil, e.Type, e.Reason, e.Action, "%s", plan.FitNote(e.Note))
	}
}
