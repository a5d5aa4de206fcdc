package noderunner

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// runInit runs the pod's init containers in order, each to completion, as a
// kubelet does before it starts the containers; one that fails runs again
// after a back-off. It gives up when the pod goes or is being deleted.
func (p *podRun) runInit(ctx context.Context) error {
	for _, spec := range p.pod.Spec.InitContainers {
		c, err := p.newContainer(ctx, spec)
		if err != nil {
			return err
		}
		for {
			if err := c.start(p); err != nil {
				return fmt.Errorf("init container %s: %w", spec.Name, err)
			}
			if err := awaitInit(p, ctx, c.waited, func() { c.signal(syscall.SIGKILL); <-c.waited }); err != nil {
				return err
			}
			code := c.stop()
			if code == 0 {
				break
			}
			p.logf("init container %s exited with %d; run again in %s", spec.Name, code, backoffBase)
			if err := awaitInit(p, ctx, time.After(backoffBase), func() {}); err != nil {
				return err
			}
		}
	}
	return nil
}

// awaitInit waits for done, unless the pod goes or is being deleted first:
// then it stops what runs and says why.
func awaitInit[T any](p *podRun, ctx context.Context, done <-chan T, stop func()) error {
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-p.gone:
			stop()
			return fmt.Errorf("deleted while its init containers ran")
		case pod := <-p.updates:
			if pod.DeletionTimestamp != nil {
				stop()
				select { // back for waitForDeletion
				case p.updates <- pod:
				default:
				}
				return fmt.Errorf("being deleted while its init containers ran")
			}
		}
	}
}
