package apply

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Foreign is an object the applier would write that exists but is not owned:
// something else created it.
type Foreign struct {
	Object *unstructured.Unstructured
	// Live is the existing object's metadata.
	Live *metav1.PartialObjectMetadata
}

// Managers are the field managers that wrote it, such as "helm" or "kubectl".
func (f Foreign) Managers() []string {
	var names []string
	if f.Live == nil {
		return nil
	}
	for _, m := range f.Live.ManagedFields {
		if !slices.Contains(names, m.Manager) {
			names = append(names, m.Manager)
		}
	}
	return names
}

func (f Foreign) String() string {
	return fmt.Sprintf("%s (written by %s)", Describe(f.Object), orUnknown(f.Managers()))
}

// FindForeign returns those of objs that exist, as reader sees their metadata,
// without the ownership labels. The reader is meant to be a cache of the
// metadata of every object of those kinds and names, so that looking costs no
// request.
func FindForeign(ctx context.Context, reader client.Reader, objs []*unstructured.Unstructured, ownership labels.Set) ([]Foreign, error) {
	owned := ownership.AsSelector()
	var foreign []Foreign
	for _, o := range objs {
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		err := reader.Get(ctx, client.ObjectKeyFromObject(o), live)
		if apierrors.IsNotFound(err) || (err == nil && owned.Matches(labels.Set(live.Labels))) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking up %s: %w", Describe(o), err)
		}
		foreign = append(foreign, Foreign{Object: o, Live: live})
	}
	return foreign, nil
}

// Delete deletes objs in order, each only if it is still the object read
// (same UID), letting the garbage collector delete what it owns. One already
// gone is no error.
func (a *Applier) Delete(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		err := a.Client.Delete(ctx, o, client.Preconditions{UID: new(o.GetUID())}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", Describe(o), err)
		}
	}
	return nil
}

// Key identifies an object across API versions of its kind.
type Key struct {
	schema.GroupKind
	Namespace, Name string
}

// KeyOf returns o's Key.
func KeyOf(o *unstructured.Unstructured) Key {
	return Key{GroupKind: o.GroupVersionKind().GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

func orUnknown(names []string) string {
	if len(names) == 0 {
		return "an unknown manager"
	}
	s := names[0]
	for _, n := range names[1:] {
		s += ", " + n
	}
	return s
}
