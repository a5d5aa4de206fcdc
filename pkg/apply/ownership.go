package apply

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
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
	// Managers are the field managers that wrote it, such as "helm" or "kubectl".
	Managers []string
}

func (f Foreign) String() string {
	return fmt.Sprintf("%s (written by %s)", Describe(f.Object), orUnknown(f.Managers))
}

// foreignLookups bounds the API requests Foreign makes at once.
const foreignLookups = 8

// Foreign returns those of objs that exist in the cluster without the ownership
// labels. Objects a cache of owned objects misses are looked up with the API
// server, several at a time.
func (a *Applier) Foreign(ctx context.Context, objs []*unstructured.Unstructured, ownership labels.Set) ([]Foreign, error) {
	found := make([]*Foreign, len(objs))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(foreignLookups)
	for i, o := range objs {
		g.Go(func() error {
			f, err := a.foreign(ctx, o, ownership)
			found[i] = f
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var foreign []Foreign
	for _, f := range found {
		if f != nil {
			foreign = append(foreign, *f)
		}
	}
	return foreign, nil
}

func (a *Applier) foreign(ctx context.Context, o *unstructured.Unstructured, ownership labels.Set) (*Foreign, error) {
	owned := ownership.AsSelector()
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(o.GroupVersionKind())
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(o), cached)
	if err == nil && owned.Matches(labels.Set(cached.GetLabels())) {
		return nil, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	reader := a.APIReader
	if reader == nil {
		reader = a.Client
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	err = reader.Get(ctx, client.ObjectKeyFromObject(o), live)
	if apierrors.IsNotFound(err) || (err == nil && owned.Matches(labels.Set(live.Labels))) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Foreign{Object: o, Managers: managers(live)}, nil
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

func managers(o *metav1.PartialObjectMetadata) []string {
	var names []string
	for _, m := range o.ManagedFields {
		if !slices.Contains(names, m.Manager) {
			names = append(names, m.Manager)
		}
	}
	return names
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
