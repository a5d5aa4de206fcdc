package metallb

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Speakers that cannot become ready on two nodes hang the rollout: after the
// (here shortened) timeout, Degraded says RolloutHung and names both nodes;
// when the rollout can finish, Degraded clears.
func TestHungRolloutNamesTheNodes(t *testing.T) {
	opts := testOptions()
	opts.HungAfter = 3 * time.Second
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(3)}, opts)
	ctx := t.Context()
	// Two nodes nobody runs pods on: kwok does not manage them.
	for _, name := range []string{"stuck-a", "stuck-b"} {
		if err := m.client.Create(ctx, readyNodeNobodyRuns(name)); err != nil {
			t.Fatal(err)
		}
	}
	m.waitCRDs(t)
	m.createPool(t, DefaultNamespace, "pool1")
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	c := m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool { return c.Reason == ReasonRolloutHung })
	t.Logf("RolloutHung after %s: %s", time.Since(start).Round(100*time.Millisecond), c.Message)
	if !strings.Contains(c.Message, "the speaker is not ready on nodes: stuck-a, stuck-b.") {
		t.Errorf("RolloutHung does not name the two nodes: %q", c.Message)
	}
	if time.Since(start) < opts.HungAfter {
		t.Errorf("RolloutHung after %s, before the %s timeout", time.Since(start), opts.HungAfter)
	}

	// The nodes are fixed (kwok takes them over) and their pods restarted: the
	// rollout finishes, and Degraded clears.
	for _, name := range []string{"stuck-a", "stuck-b"} {
		node := &corev1.Node{}
		if err := m.client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			t.Fatal(err)
		}
		node.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
		if err := m.client.Update(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	var pods corev1.PodList
	if err := m.client.List(ctx, &pods, client.InNamespace(DefaultNamespace), client.MatchingLabels{"component": "speaker"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Spec.NodeName, "stuck-") {
			if err := m.client.Delete(ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
	}
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
