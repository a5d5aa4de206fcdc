package metallb

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// When nothing changes, the module writes nothing: 100 forced reconciles of an
// active MetalLB, with a MetalLB object and a pool outside the namespace (both
// of which it reports on), make no create, update, patch or delete request,
// and give no Event.
func TestIdleModuleWritesNothing(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	ctx := t.Context()
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.createPool(t, "default", "elsewhere")
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	m.waitSpeakerDaemonSet(t)
	m.waitDegraded(t, clusterObject, isFalse)
	m.waitEvent(t, "default", "elsewhere", "Ignored", "is outside metallb-system")
	if m.writes() == 0 {
		t.Fatal("no write counted while MetalLB was deployed: the counter does not count")
	}
	settle(t, m)
	m.assertWritesNothing(t, 100)
}

// assertWritesNothing reconciles n times: no write, and no Event.
func (m *moduleEnv) assertWritesNothing(t *testing.T, n int) {
	t.Helper()
	writes, events := m.writes(), m.events.Load()
	for range n {
		if _, err := m.r.Reconcile(t.Context(), request); err != nil {
			t.Fatal(err)
		}
	}
	if d := m.writes() - writes; d != 0 {
		t.Errorf("%d reconciles of an unchanged cluster made %d mutating requests, want 0", n, d)
	}
	if d := m.events.Load() - events; d != 0 {
		t.Errorf("%d reconciles of an unchanged cluster gave %d Events, want 0", n, d)
	}
}

// settle waits until the module has nothing left to do: no reconcile is under
// way (it holds the reconciler's lock), and a plan made from what the cache
// shows writes nothing. A reconcile queued meanwhile sees the same cache, or
// a newer one: it writes nothing either.
func settle(t testing.TB, m *moduleEnv) {
	t.Helper()
	waitFor(t, "the module to have nothing left to do", 30*time.Second, func(ctx context.Context) (bool, error) {
		m.r.mu.Lock()
		defer m.r.mu.Unlock()
		now := m.r.clock.Now()
		s, err := m.r.observe(ctx, now)
		if err != nil {
			return false, err
		}
		p := plan.Make(s, m.r.opts, now)
		return len(p.Apply) == 0 && len(p.Prune) == 0 && len(p.Statuses) == 0 && p.Tracking == nil && p.Report(nil).MetalLB == nil, nil
	})
}
