package binarybench

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Objects is what a Watch holds: the selected objects present, by name.
type Objects map[string]*unstructured.Unstructured

// Watch follows the objects of one resource that a selector picks, from a
// list on: it sees every change after it is made, so a change made after
// NewWatch returns cannot be missed, and it times changes without polling.
// It resumes when the API server ends the watch, and lists again when the
// server has forgotten the resourceVersion it resumes from.
type Watch struct {
	// Changes counts the changes seen since the list (objects added, modified
	// or deleted): each is a write to the API server.
	Changes int

	resource dynamic.ResourceInterface
	opts     metav1.ListOptions
	objects  Objects
	version  string // the resourceVersion seen last
	w        watch.Interface
}

// NewWatch lists the objects of resource that opts select and starts
// watching them from there.
func NewWatch(ctx context.Context, resource dynamic.ResourceInterface, opts metav1.ListOptions) (*Watch, error) {
	w := &Watch{resource: resource, opts: opts}
	if err := w.list(ctx); err != nil {
		return nil, err
	}
	if err := w.watch(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// ByName selects the object of one name.
func ByName(name string) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: "metadata.name=" + name}
}

func (w *Watch) list(ctx context.Context) error {
	list, err := w.resource.List(ctx, w.opts)
	if err != nil {
		return err
	}
	w.objects = Objects{}
	for i := range list.Items {
		w.objects[list.Items[i].GetName()] = &list.Items[i]
	}
	w.version = list.GetResourceVersion()
	return nil
}

func (w *Watch) watch(ctx context.Context) error {
	opts := w.opts
	opts.ResourceVersion = w.version
	var err error
	w.w, err = w.resource.Watch(ctx, opts)
	return err
}

// Until consumes changes until cond holds for the objects present, or ctx ends.
func (w *Watch) Until(ctx context.Context, cond func(Objects) bool) error {
	for !cond(w.objects) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.w.ResultChan():
			if err := w.handle(ctx, e, ok); err != nil {
				return err
			}
		}
	}
	return nil
}

// handle applies one event; a closed watch is resumed.
func (w *Watch) handle(ctx context.Context, e watch.Event, open bool) error {
	if !open {
		return w.watch(ctx)
	}
	switch e.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		o, ok := e.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("watch event of type %T", e.Object)
		}
		w.version = o.GetResourceVersion()
		w.Changes++
		if e.Type == watch.Deleted {
			delete(w.objects, o.GetName())
		} else {
			w.objects[o.GetName()] = o
		}
	case watch.Error:
		err := apierrors.FromObject(e.Object)
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return fmt.Errorf("watching: %v", err)
		}
		w.w.Stop()
		if err := w.list(ctx); err != nil {
			return err
		}
		return w.watch(ctx)
	}
	return nil
}

// Stop ends the watch.
func (w *Watch) Stop() { w.w.Stop() }

// Exists holds when the object of the name is present.
func Exists(name string) func(Objects) bool {
	return func(o Objects) bool { return o[name] != nil }
}

// None holds when no object is present.
func None(o Objects) bool { return len(o) == 0 }

// Never holds never: Until then follows changes until its context ends.
func Never(Objects) bool { return false }

// Get returns the object of a name, nil when it is not present.
func (w *Watch) Get(name string) *unstructured.Unstructured { return w.objects[name] }
