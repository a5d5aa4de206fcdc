package status

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventLastSeen is when an Event last happened: the core API's Events tell
// it in lastTimestamp, those of events.k8s.io in their series or eventTime.
func EventLastSeen(e *corev1.Event) time.Time {
	last := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(last) {
		last = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(last) {
		last = e.EventTime.Time
	}
	return last
}
