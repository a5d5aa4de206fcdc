package transient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Is tells whether a request that failed on err may succeed if made again:
// the API server, or what is in front of it, failed or was overloaded (any
// 5xx, a 429, a timeout), the object changed under the request (a conflict:
// the step reads it again), or the connection was refused or lost.
func Is(err error) bool {
	if err == nil {
		return false
	}
	// By the answer's code: every 5xx (InternalError, ServiceUnavailable,
	// ServerTimeout and Timeout among them, and a proxy's 502), whatever its
	// body. Not apierrors.IsUnexpectedServerError: it tells an answer without
	// a Status body, whatever its code (a 401 among them).
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code >= 500 {
		return true
	}
	return apierrors.IsTooManyRequests(err) || apierrors.IsConflict(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsConnectionRefused(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsTimeout(err)
}

// backoff spaces the tries of a step: 0.2 s, doubling, then every 10 s, each
// a tenth jittered, so that a one-off error costs a fifth of a second and an
// API server down for minutes is asked, and the wait logged, six times a
// minute.
var backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 10 * time.Second}

// Retry runs do until it succeeds or fails on an error that lasts, which it
// returns; it logs every error that passes, naming the step. It gives up
// only when ctx ends.
func Retry(ctx context.Context, log logr.Logger, step string, do func(context.Context) error) error {
	b := backoff
	for {
		err := do(ctx)
		if !Is(err) {
			return err
		}
		wait := b.Step()
		log.Info("retrying after an error that passes", "step", step, "error", err.Error(), "after", wait.Round(time.Millisecond).String())
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("stopped while %s: %w", step, err)
		case <-timer.C:
		}
	}
}

// Served tells whether the API server serves a kind, as mapper finds it,
// retrying (Retry) discovery that failed on an error that passes: a kind
// missing from a discovery that failed is not a kind the cluster lacks.
func Served(ctx context.Context, log logr.Logger, mapper meta.RESTMapper, gk schema.GroupKind) (bool, error) {
	served := false
	err := Retry(ctx, log, "discovering whether the API server serves "+gk.String(), func(context.Context) error {
		_, err := mapper.RESTMapping(gk)
		switch {
		case err == nil:
			served = true
		case !Is(err) && meta.IsNoMatchError(err):
			return nil
		}
		return err
	})
	return served, err
}
