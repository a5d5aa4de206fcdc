package metallb

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// watchDelivery is how much later one deletion may be seen than another
// made as long after: the watch delivers each a few milliseconds late.
const watchDelivery = 250 * time.Millisecond

// Back from frr-k8s to native BGP, with the real kube-controller-manager
// (its garbage collector leaving the pods, its DaemonSet controller) and
// kwok nodes: frr-k8s's pods leave one node at a time (maxUnavailable 1),
// each plan.FRRK8sHandover or more after the one before, also across a
// restart of the operator after the first; frr-k8s's status cleaner stays
// until the last pod is gone, then goes; Progressing says what goes on.
func TestFRRK8sLeavesNodeByNode(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)})
	m.run(t, testOptions())
	m.waitCRDs(t)
	m.activate(t, v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s})
	m.waitStatus(t, testOptions().Images.ReleaseVersion, 2*time.Minute)
	waitFor(t, "frr-k8s on every node", time.Minute, func(ctx context.Context) (bool, error) {
		return len(m.frrK8sPods(t)) == 3, nil
	})
	deleted := m.watchDeletions(t, manifests.FRRK8sPods)

	if err := m.setSpec(t, "bgpBackend: native"); err != nil {
		t.Fatal(err)
	}
	m.waitProgressing(t, "frr-k8s leaves the nodes 1 at a time")
	waitFor(t, "a first frr-k8s pod deleted", time.Minute, func(context.Context) (bool, error) { return len(deleted()) > 0, nil })
	m.stop()
	m.run(t, testOptions())
	waitFor(t, "frr-k8s gone from every node", 2*time.Minute, func(context.Context) (bool, error) { return len(m.frrK8sPods(t)) == 0, nil })
	if m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.FRRK8sStatusCleaner) == nil {
		t.Errorf("frr-k8s's status cleaner was gone before its pods had left every node")
	}
	waitFor(t, "frr-k8s's status cleaner gone", time.Minute, func(context.Context) (bool, error) {
		return m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.FRRK8sStatusCleaner) == nil, nil
	})
	m.assertLeftOneByOne(t, deleted())
}

// activate creates the MetalLB object with the spec, then a pool.
func (m *moduleEnv) activate(t *testing.T, spec v1beta1.MetalLBSpec) {
	t.Helper()
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}, Spec: spec}
	if err := m.client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	m.createPool(t, manifests.DefaultNamespace, "pool1")
}

// frrK8sPods are frr-k8s's pods, owned by its DaemonSet or left by it.
func (m *moduleEnv) frrK8sPods(t *testing.T) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := m.client.List(t.Context(), &pods, client.InNamespace(manifests.DefaultNamespace), client.MatchingLabels(manifests.FRRK8sPods)); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// watchDeletions returns when each pod of MetalLB's namespace with the labels
// was first seen deleted (its deletion requested, or gone), as far as seen.
func (m *moduleEnv) watchDeletions(t *testing.T, labels map[string]string) func() map[string]time.Time {
	t.Helper()
	c, err := clientWithWatch(m.Env)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(t.Context(), &corev1.PodList{}, client.InNamespace(manifests.DefaultNamespace), client.MatchingLabels(labels))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	seen := make(chan map[string]time.Time, 1)
	seen <- map[string]time.Time{}
	go func() {
		for e := range w.ResultChan() {
			pod, ok := e.Object.(*corev1.Pod)
			if !ok || e.Type != watch.Deleted && pod.DeletionTimestamp == nil {
				continue
			}
			at := <-seen
			if _, ok := at[pod.Name]; !ok {
				at[pod.Name] = time.Now()
			}
			seen <- at
		}
	}()
	return func() map[string]time.Time {
		at := <-seen
		defer func() { seen <- at }()
		return maps.Clone(at)
	}
}

// assertLeftOneByOne checks that the pods were deleted one at a time, each
// plan.FRRK8sHandover or more after the one before.
func (m *moduleEnv) assertLeftOneByOne(t *testing.T, deleted map[string]time.Time) {
	t.Helper()
	times := slices.SortedFunc(maps.Values(deleted), time.Time.Compare)
	if len(times) != 3 {
		t.Fatalf("%d frr-k8s pods seen deleted, want 3", len(times))
	}
	for i := 1; i < len(times); i++ {
		gap := times[i].Sub(times[i-1])
		t.Logf("frr-k8s pod %d deleted %s after the one before", i+1, gap.Round(time.Millisecond))
		if gap < plan.FRRK8sHandover-watchDelivery {
			t.Errorf("frr-k8s pod %d deleted %s after the one before, want %s or more", i+1, gap, plan.FRRK8sHandover)
		}
	}
}
