package transient

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A reconcile failing again and again is tried every MaxFailureBackoff at
// most; a success (Forget) starts it again from milliseconds.
func TestRateLimiterCapsTheBackoff(t *testing.T) {
	l := RateLimiter()
	item := reconcile.Request{}
	var last time.Duration
	for range 30 {
		last = l.When(item)
	}
	if last != MaxFailureBackoff {
		t.Errorf("after 30 failures the wait is %s, want %s", last, MaxFailureBackoff)
	}
	l.Forget(item)
	if first := l.When(item); first > 10*time.Millisecond {
		t.Errorf("after a success the wait is %s, want milliseconds", first)
	}
}
