package nodeaddress

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/memrelease"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// retryAfter is how long the mode waits to start, or to sweep, again after
// an error: the API server's, which a few seconds may cure.
const retryAfter = 5 * time.Second

// sweepPage is how many Services the sweep reads at a time: their metadata,
// a few hundred KiB a page.
const sweepPage = 500

// Start runs the mode while its scope has it enabled, and sweeps what it wrote
// from every Service when it is not. Its cache and controller exist only while
// it runs, until the manager stops.
func (r *Reconciler) Start(ctx context.Context) error {
	var running *session
	var err error
	defer func() { running.stop() }()
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.switched:
		case <-retry:
		case err = <-running.failures():
			ctrl.LoggerFrom(ctx).Error(err, "the node-address mode stopped")
			running.stop()
			running = nil
		}
		retry = nil // this follow is the one a retry would make
		if running, err = r.follow(ctx, running); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "the node-address mode did not start or stop", "retryAfter", retryAfter)
			retry = time.After(retryAfter)
		}
	}
}

// follow starts the mode, or stops it and sweeps, as its scope says.
func (r *Reconciler) follow(ctx context.Context, running *session) (*session, error) {
	switch s := r.scope.Load(); {
	case s == nil: // before the first plan: what the last operator wrote stays
		return running, nil
	case s.Enabled && running == nil:
		return r.run(ctx)
	case !s.Enabled:
		running.stop()
		return nil, r.sweep(ctx)
	}
	return running, nil
}

// session is the running mode: its cache, and its controller over it.
type session struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
	failed chan error
}

// run starts the mode's cache and controller.
func (r *Reconciler) run(ctx context.Context) (*session, error) {
	// The context only bounds the wait for an informer the cache has started:
	// this one has not.
	c, err := r.newCache(ctx)
	if err != nil {
		return nil, err
	}
	ctl, err := r.newController(c)
	if err != nil {
		return nil, err
	}
	// Read only by the controller's handlers and reconciles, which start
	// after this and end before the next session's. The eligible nodes of the
	// last session may be out of date: no Node was watched since.
	r.own = c
	r.nodesGen.Add(1)
	sctx, cancel := context.WithCancel(ctx)
	s := &session{cancel: cancel, failed: make(chan error, 2)}
	for _, start := range []func(context.Context) error{c.Start, ctl.Start} {
		s.done.Go(func() {
			if err := start(sctx); err != nil {
				s.failed <- err
			}
		})
	}
	return s, nil
}

// stop ends the session, once no reconcile is under way; nil is stopped.
func (s *session) stop() {
	if s != nil {
		s.cancel()
		s.done.Wait()
	}
}

// failures tells when the cache or the controller stopped on an error; nil
// never does.
func (s *session) failures() <-chan error {
	if s == nil {
		return nil
	}
	return s.failed
}

// sweep removes what the mode wrote from every Service, with a Warning Event
// on each: the mode is off and keeps no cache of the Services. Their managed
// fields tell which it wrote, so it reads their metadata, a page at a time.
// What it read is garbage once it is done, and it is done at start and when
// the mode goes off, with nothing to follow: it returns that memory to the
// system at once if it is worth it, not once the operator has been quiet for
// a while (operator.IdleRelease). On a cluster of 10,000 Services that is
// some 5 MiB of the operator's resident set 3 s after its start
// (docs/benchmarks.md).
func (r *Reconciler) sweep(ctx context.Context) error {
	defer memrelease.ReleaseIfWorth()
	next := ""
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		if err := r.reader.List(ctx, list, client.Limit(sweepPage), client.Continue(next)); err != nil {
			return fmt.Errorf("listing Services to remove the node-address mode's addresses: %w", err)
		}
		for i := range list.Items {
			if err := r.unwrite(ctx, &list.Items[i]); err != nil {
				return err
			}
		}
		if next = list.Continue; next == "" {
			return nil
		}
	}
}

// unwrite removes what the mode wrote from the Service, if anything.
func (r *Reconciler) unwrite(ctx context.Context, m *metav1.PartialObjectMetadata) error {
	if !ownsStatus(m.ManagedFields) {
		return nil
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID}}
	err := r.client.Status().Apply(ctx, statusApply(svc, nil), client.FieldOwner(FieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the node-address mode's addresses from Service %s/%s: %w", m.Namespace, m.Name, err)
	}
	r.events.Eventf(svc, nil, corev1.EventTypeWarning, "NodeAddressOff", "RemoveNodeAddress",
		"The node-address mode is off, so the node addresses it published for this Service are removed. It serves Services of the class %s when spec.nodeAddress.mode is Enabled on the MetalLB object, or is unset on a single-node cluster",
		decide.Class)
	return nil
}
