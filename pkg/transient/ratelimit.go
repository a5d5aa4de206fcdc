package transient

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MaxFailureBackoff caps how long a reconcile that failed waits before it
// is tried again. controller-runtime's default doubles the wait with every
// failure in a row, up to 1,000 s, and only a success resets it: under a
// struggling API server a short rollout would go unreported for its whole
// length. The operator's reconciles are one request per controller, so
// trying every few seconds costs the API server little.
const MaxFailureBackoff = 2 * time.Second

// RateLimiter is the rate limiter of the operator's controllers: a failed
// reconcile is tried again after 5 ms, doubling up to MaxFailureBackoff;
// overall, controller-runtime's default 10 a second with bursts of 100.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxFailureBackoff),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
