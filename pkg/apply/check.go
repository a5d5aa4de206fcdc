package apply

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Refused is a write the API server refused in a dry run: nothing was written.
type Refused struct {
	Object *unstructured.Unstructured
	Err    error
}

func (r *Refused) Error() string {
	return fmt.Sprintf("the API server refuses %s: %v", objects.Describe(r.Object), r.Err)
}

func (r *Refused) Unwrap() error { return r.Err }

// Check has the API server validate and admit the changes of the objects of
// objs that exist (existed tells), as Write would make them, without storing
// any (a server-side dry run, concurrent), so that a change it refuses in
// part is not written in part: what runs is what was last applied whole.
// Objects to be created are not checked: nothing runs from them yet, and a
// first activation costs no more requests. It returns a *Refused naming an
// object refused, and another error when it could not check (the API server
// unreachable, say): either way, nothing is to be written.
//
// A change a dry run cannot check before the objects it needs are written is
// taken as it comes: the API server answers "not found" for a binding whose
// role is new.
func (a *Applier) Check(ctx context.Context, objs []*unstructured.Unstructured, existed func(*unstructured.Unstructured) bool) error {
	dry := &Applier{Client: a.Client, FieldOwner: a.FieldOwner, DryRun: true}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrentWrites)
	for _, o := range objs {
		if !existed(o) {
			continue
		}
		g.Go(func() error {
			_, err := dry.writeOne(gctx, o, existed)
			switch {
			case err == nil || apierrors.IsNotFound(err):
				return nil
			case refusal(err):
				return &Refused{Object: o, Err: err}
			}
			return fmt.Errorf("checking %s: %w", objects.Describe(o), err)
		})
	}
	return g.Wait()
}

// refusal tells whether the API server refused a write for what it says
// (invalid, too large, denied by admission), which writing it again does not
// change.
func refusal(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsForbidden(err)
}
