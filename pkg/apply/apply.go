package apply

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// establishedTimeout bounds the wait for a new CRD to be served.
const establishedTimeout = 30 * time.Second

// Applier writes objects with server-side apply, as one field manager.
type Applier struct {
	Client     client.Client
	FieldOwner string
	// DryRun has the API server validate and admit every write without storing it.
	DryRun bool
}

// Apply writes objs in order. A create-only object is created when missing and
// otherwise left alone. After a CustomResourceDefinition the next object waits
// until it is Established, so custom resources that follow can be written.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := a.applyOne(ctx, o); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), key(o), err)
		}
	}
	return nil
}

func (a *Applier) applyOne(ctx context.Context, o *unstructured.Unstructured) error {
	if CreateOnly(o) {
		return a.create(ctx, o)
	}
	opts := []client.ApplyOption{client.FieldOwner(a.FieldOwner), client.ForceOwnership}
	if a.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), opts...); err != nil {
		return err
	}
	if o.GroupVersionKind().GroupKind() == apiextensionsv1.Kind("CustomResourceDefinition") && !a.DryRun {
		return a.waitEstablished(ctx, o.GetName())
	}
	return nil
}

func (a *Applier) create(ctx context.Context, o *unstructured.Unstructured) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(o), live)
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	opts := []client.CreateOption{client.FieldOwner(a.FieldOwner)}
	if a.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	return a.Client.Create(ctx, o.DeepCopy(), opts...)
}

func (a *Applier) waitEstablished(ctx context.Context, name string) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, establishedTimeout, true, func(ctx context.Context) (bool, error) {
		if err := a.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			c, _ := c.(map[string]any)
			if c["type"] == string(apiextensionsv1.Established) {
				return c["status"] == string(apiextensionsv1.ConditionTrue), nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("not Established after %s: %w", establishedTimeout, err)
	}
	return nil
}

func key(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
