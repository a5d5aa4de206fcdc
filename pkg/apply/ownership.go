package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// FindForeign returns those of objs that exist, as reader sees their metadata,
// without the ownership labels. The reader is meant to be a cache of the
// metadata of every object of those kinds and names, so that looking costs no
// request.
func FindForeign(ctx context.Context, reader client.Reader, objs []*unstructured.Unstructured, ownership labels.Set) ([]objects.Foreign, error) {
	owned := ownership.AsSelector()
	var foreign []objects.Foreign
	for _, o := range objs {
		live := objects.Metadata(o.GroupVersionKind())
		err := reader.Get(ctx, client.ObjectKeyFromObject(o), live)
		if apierrors.IsNotFound(err) || (err == nil && owned.Matches(labels.Set(live.Labels))) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking up %s: %w", objects.Describe(o), err)
		}
		foreign = append(foreign, objects.Foreign{Object: o, Live: live})
	}
	return foreign, nil
}

// Delete deletes the objects in order, each only if it is still the object
// read (same UID), the garbage collector then deleting what it owns
// (Background) or leaving it (Orphan). One already gone is no error.
func (a *Applier) Delete(ctx context.Context, refs []objects.Ref, owned metav1.DeletionPropagation) error {
	for _, r := range refs {
		err := a.Client.Delete(ctx, r.Object(), client.Preconditions{UID: new(r.UID)}, client.PropagationPolicy(owned))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", r, err)
		}
	}
	return nil
}
