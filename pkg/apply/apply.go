package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// establishedTimeout bounds the wait for a new CRD to be served.
const establishedTimeout = 30 * time.Second

// Applier writes objects with server-side apply, as one field manager.
type Applier struct {
	// Client writes, and reads the objects the applier owns; its reads may come
	// from a cache that holds only those, even without copying them: the
	// applier never changes what it reads.
	Client     client.Client
	FieldOwner string
	// DryRun has the API server validate and admit every write without storing it.
	DryRun bool
}

// Change is a write the applier made.
type Change struct {
	Object *unstructured.Unstructured
	// Created tells whether the object did not exist before.
	Created bool
}

// concurrentWrites bounds the writes Write makes at once.
const concurrentWrites = 8

// Apply writes those of objs that NeedsWrite finds different from the cluster
// as Client reads it, in order; see Write. Each run of objects of one kind is
// read just before it is written, once the CRDs before it are served.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) ([]Change, error) {
	var changes []Change
	existed := map[objects.Key]bool{}
	for _, run := range runsOfKind(objs) {
		var writes []*unstructured.Unstructured
		for _, o := range run {
			live, err := a.live(ctx, o)
			if err != nil {
				return changes, fmt.Errorf("reading %s: %w", objects.Describe(o), err)
			}
			if objects.NeedsWrite(o, live) {
				writes = append(writes, o)
				existed[objects.KeyOf(o)] = live != nil
			}
		}
		written, err := a.Write(ctx, writes, func(o *unstructured.Unstructured) bool { return existed[objects.KeyOf(o)] })
		changes = append(changes, written...)
		if err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// Write writes objs in order: a create-only object is created, and left alone
// if it exists by then; any other is applied with server-side apply, taking
// over the fields it sets. existed tells whether an object existed before, for
// the Changes. Objects are written in waves, concurrently within one, each
// once the objects before it that it may need are written (waves: roles
// before their bindings, a workload after its ServiceAccount, ConfigMaps and
// Secrets, a kind not known after all before it). A
// CustomResourceDefinition is waited for until it is Established and its
// kind is mapped, so that custom resources that follow can be written. The
// writes of a wave all run to their end, even when one fails: a write
// cancelled on its way may still be made by the API server, and the caller
// would not learn that it created the object (under injected faults, the
// memberlist key's MemberlistKeyGenerated Event was lost so).
func (a *Applier) Write(ctx context.Context, objs []*unstructured.Unstructured, existed func(*unstructured.Unstructured) bool) ([]Change, error) {
	var changes []Change
	for _, run := range waves(objs) {
		done := make([]*Change, len(run))
		var g errgroup.Group
		g.SetLimit(concurrentWrites)
		for i, o := range run {
			g.Go(func() error {
				change, err := a.writeOne(ctx, o, existed)
				if err != nil {
					return fmt.Errorf("applying %s: %w", objects.Describe(o), err)
				}
				done[i] = change
				return nil
			})
		}
		err := g.Wait()
		for _, c := range done {
			if c != nil {
				changes = append(changes, *c)
			}
		}
		if err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// runsOfKind cuts objs into runs of consecutive objects of one kind.
func runsOfKind(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var runs [][]*unstructured.Unstructured
	for i, o := range objs {
		if i == 0 || o.GroupVersionKind() != objs[i-1].GroupVersionKind() {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], o)
	}
	return runs
}

func (a *Applier) writeOne(ctx context.Context, desired *unstructured.Unstructured, existed func(*unstructured.Unstructured) bool) (*Change, error) {
	if objects.CreateOnly(desired) {
		return a.create(ctx, desired)
	}
	opts := []client.ApplyOption{client.FieldOwner(a.FieldOwner), client.ForceOwnership}
	if a.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(objects.Applied(desired)), opts...); err != nil {
		return nil, err
	}
	if isCRD(desired) && !a.DryRun {
		if err := a.waitEstablished(ctx, desired.GetName()); err != nil {
			return nil, err
		}
	}
	return &Change{Object: desired, Created: !existed(desired)}, nil
}

// live returns the object as Client sees it, or nil if it does not. A miss in
// a cache that lags behind means a write that changes nothing, not a wrong one.
func (a *Applier) live(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(desired), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return live, nil
}

func (a *Applier) create(ctx context.Context, o *unstructured.Unstructured) (*Change, error) {
	opts := []client.CreateOption{client.FieldOwner(a.FieldOwner)}
	if a.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := a.Client.Create(ctx, o.DeepCopy(), opts...)
	if apierrors.IsAlreadyExists(err) {
		return nil, nil // created since we looked; it is not ours to change
	}
	if err != nil {
		return nil, err
	}
	return &Change{Object: o, Created: true}, nil
}

func isCRD(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().GroupKind() == objects.CustomResourceDefinition.GroupKind()
}

// waitEstablished waits until the CRD is Established and the client maps its
// kind in every served version: the API server serves a new kind in discovery a
// moment after it marks the CRD Established, and until then writes of its
// custom resources fail with no match for the kind.
func (a *Applier) waitEstablished(ctx context.Context, name string) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(objects.CustomResourceDefinition)
	notYet := errors.New("not Established")
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, establishedTimeout, true, func(ctx context.Context) (bool, error) {
		if err := a.Client.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, crd); err != nil {
			return false, err
		}
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			return false, nil
		}
		notYet = a.mapped(crd)
		return notYet == nil, nil
	})
	if err != nil {
		return fmt.Errorf("not served after %s: %w", establishedTimeout, errors.Join(notYet, err))
	}
	return nil
}

// mapped tells whether the client's REST mapper knows the CRD's kind in every
// version the CRD serves.
func (a *Applier) mapped(crd *apiextensionsv1.CustomResourceDefinition) error {
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if _, err := a.Client.RESTMapper().RESTMapping(gk, v.Name); err != nil {
			return err
		}
	}
	return nil
}
