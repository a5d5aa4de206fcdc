package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Speakers that cannot become ready on two nodes hang the rollout: once the
// clock passes the timeout with no progress, Degraded says RolloutHung and
// names both nodes, and not a second before; when the speakers are kept off
// them, the rollout finishes and Degraded clears.
func TestHungRolloutNamesTheNodes(t *testing.T) {
	t.Parallel()
	opts := testOptions()
	clock := clocktesting.NewFakeClock(time.Now())
	opts.Clock = clock
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
	// The controller is kept on the healthy nodes from its first write: the
	// scheduler could put it on a stuck one, where it would hang too, and a
	// pod of its first template left there is never confirmed gone. The
	// MetalLB object activates MetalLB: the pool comes once the controller is
	// written, else the pool's event, on another watch, may come first.
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName},
		Spec: v1beta1.MetalLBSpec{ControllerNodeSelector: v1beta1.NodeSelector{"example.com/healthy": "true"}}}
	if err := m.client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller written", time.Minute, func(context.Context) (bool, error) {
		return m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName) != nil, nil
	})
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	// The rollout goes as far as it can: then it makes no progress.
	m.waitProgressing(t, "controller: 1 of 1 replicas updated, speaker: 5 of 5 nodes updated, 2 unavailable")

	clock.Step(opts.HungAfter - time.Second)
	m.reconcile(t)
	if c := m.degraded(t); c.Reason == plan.ReasonRolloutHung {
		t.Fatalf("RolloutHung a second before the %s timeout: %s", opts.HungAfter, c.Message)
	}
	clock.Step(2 * time.Second)
	m.reconcile(t)
	c := m.waitDegraded(t, clusterObject, func(c metav1.Condition) bool { return c.Reason == plan.ReasonRolloutHung })
	if !strings.Contains(c.Message, "the speaker is not ready on nodes: stuck-a, stuck-b.") {
		t.Errorf("RolloutHung does not name the two nodes: %q", c.Message)
	}
	m.keepSpeakersOn(t, "example.com/healthy")
	m.waitDegraded(t, clusterObject, isFalse)
	m.waitStatus(t, opts.Images.ReleaseVersion, 30*time.Second)
}

// keepSpeakersOn has the speakers run only on nodes with the label, and
// force-deletes their pods on the stuck nodes, which no kubelet will ever
// confirm gone.
func (m *moduleEnv) keepSpeakersOn(t *testing.T, label string) {
	t.Helper()
	ctx := t.Context()
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(ctx, clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	obj.Spec.NodeSelector = v1beta1.NodeSelector{label: "true"}
	if err := m.client.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	// First the DaemonSet with the selector, seen by its controller: before
	// that, a pod force-deleted from another node comes back.
	waitFor(t, "the speaker DaemonSet with the node selector", 30*time.Second, func(ctx context.Context) (bool, error) {
		var ds appsv1.DaemonSet
		if err := m.client.Get(ctx, client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: manifests.SpeakerName}, &ds); err != nil {
			return false, err
		}
		return ds.Spec.Template.Spec.NodeSelector[label] == "true" && ds.Status.ObservedGeneration >= ds.Generation, nil
	})
	waitFor(t, "no speaker left on the stuck nodes", 30*time.Second, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := m.client.List(ctx, &pods, client.InNamespace(manifests.DefaultNamespace), client.MatchingLabels(manifests.SpeakerPods)); err != nil {
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
}

// waitProgressing waits until the MetalLB object's Progressing condition
// tells the rollout has reached the point given.
func (m *moduleEnv) waitProgressing(t *testing.T, want string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj := &v1beta1.MetalLB{}
		if err := m.client.Get(ctx, clusterObject, obj); err != nil {
			return false, err
		}
		if c := meta.FindStatusCondition(obj.Status.Conditions, status.Progressing); c != nil {
			last = c.Message
		}
		return strings.Contains(last, want), nil
	})
	if err != nil {
		t.Fatalf("Progressing does not say %q: %v; last %q", want, err, last)
	}
}

// reconcile reconciles, as any event would have the module do; a status
// write that meets one the module's own reconciles just made is retried, and
// one held back is made when the module asked to look again, as the module's
// queue does both.
func (m *moduleEnv) reconcile(t *testing.T) {
	t.Helper()
	for {
		var held time.Duration
		err := retry.OnError(retry.DefaultRetry, apierrors.IsConflict, func() (err error) {
			_, held, err = m.r.reconcile(t.Context())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if held == 0 {
			return
		}
		select {
		case <-time.After(held):
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
	}
}

// degraded returns the MetalLB object's Degraded condition as it is.
func (m *moduleEnv) degraded(t *testing.T) metav1.Condition {
	t.Helper()
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(t.Context(), clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(obj.Status.Conditions, status.Degraded)
	if c == nil {
		t.Fatal("the MetalLB object has no Degraded condition")
	}
	return *c
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
