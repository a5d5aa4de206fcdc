package metallb

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

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

// A write of the tracking whose answer was lost leaves the cache behind the
// namespace: the next write, over the cached version, is refused, and the
// namespace is read from the API server, so that the write after it is made
// over what is there, without waiting for the cache.
func TestTrackingConflictReadsTheNamespace(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{})
	ctx := t.Context()
	r := &Reconciler{client: m.client, apiReader: m.client, opts: testOptions().Options}
	ns := &corev1.Namespace{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: manifests.DefaultNamespace}, ns); err != nil {
		t.Fatal(err)
	}
	cached := ns.ResourceVersion

	lost := status.Tracking{Version: "A", Target: "B", Progress: "speaker: 5 of 50 nodes updated", Step: 1}
	if err := r.saveTracking(ctx, lost, cached); err != nil {
		t.Fatal(err)
	}
	r.tracked = trackingWrite{} // its answer lost
	next := status.Tracking{Version: "A", Target: "B", Progress: "speaker: 10 of 50 nodes updated", Step: 2}
	if err := r.saveTracking(ctx, next, cached); !apierrors.IsConflict(err) {
		t.Fatalf("a write over the cached version after another write: %v, want a conflict", err)
	}
	if !r.tracked.newerThan(cached) || r.tracked.tracking != lost {
		t.Fatalf("after the conflict the operator holds %+v at %q; want the lost write's tracking, newer than %q", r.tracked.tracking, r.tracked.resourceVersion, cached)
	}
	if err := r.saveTracking(ctx, next, r.tracked.resourceVersion); err != nil {
		t.Fatalf("the write over the namespace as read: %v", err)
	}
}
