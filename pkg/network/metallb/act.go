package metallb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// write carries out the plan's writes: it adopts, takes the conversion
// webhook away, checks what it applies with a dry run, applies, starts the
// watches the plan asks for once their CRDs are applied, and prunes, in that
// order. An error stops the writes that follow it.
func (r *Reconciler) write(ctx context.Context, s *plan.Snapshot, p *plan.Plan) ([]apply.Change, error) {
	for _, ref := range p.Adopt {
		if err := r.adopt(ctx, ref); err != nil {
			return nil, err
		}
	}
	if p.ConversionOff != nil {
		if err := r.conversionOff(ctx, *p.ConversionOff); err != nil {
			return nil, err
		}
	}
	applier := &apply.Applier{Client: r.client, FieldOwner: manifests.FieldOwner}
	existed := func(o *unstructured.Unstructured) bool { return s.Owned[objects.KeyOf(o)] != nil }
	if err := check(ctx, applier, p.Apply, existed); err != nil {
		return nil, err
	}
	changes, err := applier.Write(ctx, p.Apply, existed)
	if err != nil {
		return changes, err
	}
	if p.WatchConfigs {
		if err := r.watchConfigs(); err != nil {
			return changes, err
		}
	}
	if err := applier.Delete(ctx, p.Prune, metav1.DeletePropagationBackground); err != nil {
		return changes, err
	}
	return changes, r.leaveNodes(ctx, applier, p)
}

// leaveNodes deletes frr-k8s's DaemonSet leaving its pods, and the batch of
// them the plan retires (plan.FRRK8sHandover).
func (r *Reconciler) leaveNodes(ctx context.Context, applier *apply.Applier, p *plan.Plan) error {
	if err := applier.Delete(ctx, p.Orphan, metav1.DeletePropagationOrphan); err != nil {
		return err
	}
	if len(p.Retire) == 0 {
		return nil
	}
	r.frrK8sLeftAt = r.clock.Now()
	return applier.Delete(ctx, p.Retire, metav1.DeletePropagationBackground)
}

// check has the API server check every change about to be applied to what
// exists, so that a change it refuses in part (a spec valid by the CRD whose
// DaemonSet is not: 256 KiB of pod annotations) is not applied in part: the
// controller rolled to a spec whose speakers never come. It costs a request
// per object that changed, none for those created and none when nothing
// changed.
func check(ctx context.Context, applier *apply.Applier, objs []*unstructured.Unstructured, existed func(*unstructured.Unstructured) bool) error {
	err := applier.Check(ctx, objs, existed)
	if refused := (*apply.Refused)(nil); errors.As(err, &refused) {
		return &plan.RenderingRefused{Object: objects.Describe(refused.Object), Message: refused.Err.Error()}
	}
	return err
}

// adopt labels another installation's object as the module's and removes
// its owner references, so that the garbage collector does not delete it with
// the installation it came from: the memberlist key, create-only, would
// otherwise go with the other installation's controller Deployment.
func (r *Reconciler) adopt(ctx context.Context, ref objects.Ref) error {
	err := r.mergePatch(ctx, ref, map[string]any{"metadata": map[string]any{"labels": manifests.Ownership, "ownerReferences": nil}})
	if err != nil {
		return fmt.Errorf("adopting %s: %w", ref, err)
	}
	return nil
}

// conversionOff takes the BGPPeer CRD's conversion webhook away, with the CA
// bundle MetalLB's controller put in it: a server-side apply can only give up
// the fields the operator owns, and with None the API server refuses any
// webhook stanza left.
func (r *Reconciler) conversionOff(ctx context.Context, crd objects.Ref) error {
	err := r.mergePatch(ctx, crd, map[string]any{"spec": map[string]any{
		"conversion": map[string]any{"strategy": manifests.ConversionNone, "webhook": nil},
	}})
	if err != nil {
		return fmt.Errorf("turning off the conversion webhook of %s: %w", crd, err)
	}
	return nil
}

// mergePatch patches the object with a JSON merge patch, as the module's
// field manager. The Ref's UID in the patch makes it fail on an object
// replaced since it was read.
func (r *Reconciler) mergePatch(ctx context.Context, ref objects.Ref, patch map[string]any) error {
	metadata, _ := patch["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		patch["metadata"] = metadata
	}
	metadata["uid"] = ref.UID
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return r.client.Patch(ctx, ref.Object(), client.RawPatch(types.MergePatchType, data), client.FieldOwner(manifests.FieldOwner))
}
