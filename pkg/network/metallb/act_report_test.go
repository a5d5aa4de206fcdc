package metallb

import "testing"

// The tracking last written stands in for the cached one only while the cache
// has not caught up with that write.
func TestTrackingWriteNewerThan(t *testing.T) {
	for _, tc := range []struct {
		name, written, cached string
		want                  bool
	}{
		{"nothing written yet", "", "812", false},
		{"the cache behind the write", "823", "812", true},
		{"the cache at the write", "823", "823", false},
		{"the cache past it (another's write)", "823", "1004", false},
		{"a resourceVersion that is no number: the cache trusted", "823", "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (trackingWrite{resourceVersion: tc.written}).newerThan(tc.cached); got != tc.want {
				t.Errorf("written at %q newer than cached %q = %v, want %v", tc.written, tc.cached, got, tc.want)
			}
		})
	}
}
