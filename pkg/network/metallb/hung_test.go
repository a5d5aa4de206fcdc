package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Speakers that cannot become ready on two nodes hang the rollout: after the
// (here shortened) timeout, Degraded says RolloutHung and names both nodes;
// when the speakers are kept off them, the rollout finishes and Degraded clears.
func TestHungRolloutNamesTheNodes(t *testing.T) {
	opts := testOptions()
	opts.HungAfter = 3 * time.Second
	healthy := testenv.Nodes(3)
	for i := range healthy {
		healthy[i].Labels = map[string]string{"example.com/healthy": "true"}
	}
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: healthy}, opts)
	ctx := t.Context()
	// Two nodes nobody runs pods on: kwok does not manage them.
	for _, name := range []string{"stuck-a", "stuck-b"} {
		if err := m.client.Create(ctx, readyNodeNobodyRuns(name)); err != nil {
			t.Fatal(err)
		}
	}
	m.waitCRDs(t)
	start := time.Now() // the rollout, and so its last progress, come after
	m.createPool(t, DefaultNamespace, "pool1")
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}); err != nil {
		t.Fatal(err)
	}

	c := m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool { return c.Reason == ReasonRolloutHung })
	t.Logf("RolloutHung after %s: %s", time.Since(start).Round(100*time.Millisecond), c.Message)
	if !strings.Contains(c.Message, "the speaker is not ready on nodes: stuck-a, stuck-b.") {
		t.Errorf("RolloutHung does not name the two nodes: %q", c.Message)
	}
	if time.Since(start) < opts.HungAfter {
		t.Errorf("RolloutHung after %s, before the %s timeout", time.Since(start), opts.HungAfter)
	}

	// The speakers are kept off the broken nodes, and their pods there, which no
	// kubelet will ever confirm gone, are force-deleted: the rollout finishes,
	// and Degraded clears.
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(ctx, clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	obj.Spec.NodeSelector = map[string]string{"example.com/healthy": "true"}
	if err := m.client.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	// First the DaemonSet with the selector, seen by its controller: before
	// that, a pod force-deleted from a broken node comes back.
	waitFor(t, "the speaker DaemonSet with the node selector", 30*time.Second, func(ctx context.Context) (bool, error) {
		var ds appsv1.DaemonSet
		if err := m.client.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: "speaker"}, &ds); err != nil {
			return false, err
		}
		return ds.Spec.Template.Spec.NodeSelector["example.com/healthy"] == "true" && ds.Status.ObservedGeneration >= ds.Generation, nil
	})
	waitFor(t, "no speaker left on the broken nodes", 30*time.Second, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := m.client.List(ctx, &pods, client.InNamespace(DefaultNamespace), client.MatchingLabels{"component": "speaker"}); err != nil {
			return false, err
		}
		left := false
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Spec.NodeName, "stuck-") {
				left = true
				if err := m.client.Delete(ctx, &p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
					return false, err
				}
			}
		}
		return !left, nil
	})
	m.waitDegraded(t, clusterObject, isFalse)
	m.waitStatus(t, opts.Images.ReleaseVersion, 30*time.Second)
}

func readyNodeNobodyRuns(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
}
