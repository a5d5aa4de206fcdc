package noderunner

import (
	"time"

	"k8s.io/client-go/util/flowcontrol"
)

const (
	// backoffBase and backoffMax bound the kubelet's back-offs (its
	// backOffPeriod and MaxContainerBackOff): between the restarts of a
	// container, and between the pulls of an image that failed to pull.
	backoffBase = 10 * time.Second
	backoffMax  = 5 * time.Minute
	// syncRetry is how soon the kubelet syncs a pod again after a sync that
	// failed (its pod workers' back-off period): a container whose
	// configuration or image it could not get is tried again then.
	syncRetry = 10 * time.Second
)

// newBackoff is a back-off as the kubelet makes its own, with client-go's.
func newBackoff() *flowcontrol.Backoff { return flowcontrol.NewBackOff(backoffBase, backoffMax) }

// restartWait is the kubelet's doBackOff for a container that ended at
// finished: it restarts at once the first time, and after that waits out the
// back-off (10 s, doubling up to 5 min, forgotten once the container ran for
// 10 min) counted from its end. It returns how long is left to wait, and the
// back-off it waits out; a restart now moves the back-off to its next step.
func restartWait(b *flowcontrol.Backoff, key string, finished time.Time) (left, delay time.Duration) {
	if b.IsInBackOffSince(key, finished) {
		delay = b.Get(key)
		return finished.Add(delay).Sub(b.Clock.Now()), delay
	}
	b.Next(key, finished)
	return 0, 0
}
