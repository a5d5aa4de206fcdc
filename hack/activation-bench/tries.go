package main

import (
	"context"
	"fmt"
	"time"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
)

// tryTimeout bounds one activation and deactivation: today's throttled
// operator takes seconds, a broken one forever.
const tryTimeout = 2 * time.Minute

// measure times tries activations and deactivations, one after the other.
func measure(ctx context.Context, b *binarybench.Bench, tries int) (activations, deactivations []time.Duration, err error) {
	for i := range tries {
		act, deact, err := try(ctx, b, fmt.Sprintf("pool-%d", i))
		if err != nil {
			return nil, nil, fmt.Errorf("try %d: %v\n--- last lines of the operator's log ---\n%s", i+1, err, b.Operator.Tail(20))
		}
		fmt.Printf("try %2d: activation %s, deactivation %s\n", i+1, ms(act), ms(deact))
		activations, deactivations = append(activations, act), append(deactivations, deact)
	}
	return activations, deactivations, nil
}

// try creates a pool and times until MetalLB's workloads exist, then deletes
// it and times until they are gone. Before it returns the operator has
// pruned everything, so that the next try starts from an inactive MetalLB.
func try(ctx context.Context, b *binarybench.Bench, pool string) (activation, deactivation time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, tryTimeout)
	defer cancel()
	w, err := b.WatchWorkloads(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer w.Stop()
	start := time.Now()
	if err := b.CreatePool(ctx, binarybench.MetalLBNamespace, pool); err != nil {
		return 0, 0, err
	}
	if err := w.Until(ctx, true); err != nil {
		return 0, 0, fmt.Errorf("activation: %v", err)
	}
	activation = time.Since(start)
	start = time.Now()
	if err := b.DeletePool(ctx, binarybench.MetalLBNamespace, pool); err != nil {
		return 0, 0, err
	}
	if err := w.Until(ctx, false); err != nil {
		return 0, 0, fmt.Errorf("deactivation: %v", err)
	}
	deactivation = time.Since(start)
	return activation, deactivation, b.WaitPruned(ctx)
}

// printRenewals counts the writes to the operator's Lease while it is idle
// for window: each is a renewal (or a takeover, if it lost the Lease).
func printRenewals(ctx context.Context, b *binarybench.Bench, window time.Duration) error {
	fmt.Printf("counting the Lease's renewals for %s with the operator idle\n", window)
	leases := b.Dynamic.Resource(binarybench.Leases).Namespace(binarybench.OperatorNamespace)
	w, err := binarybench.NewWatch(ctx, leases, binarybench.ByName(operator.LeaseName))
	if err != nil {
		return err
	}
	defer w.Stop()
	windowCtx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	if err := w.Until(windowCtx, binarybench.Never); ctx.Err() != nil || windowCtx.Err() == nil {
		return fmt.Errorf("watching the Lease: %v", err)
	}
	perMinute := float64(w.Changes) * float64(time.Minute) / float64(window)
	fmt.Printf("lease renewals: %d in %s (%.1f per minute)\n", w.Changes, window, perMinute)
	return nil
}
