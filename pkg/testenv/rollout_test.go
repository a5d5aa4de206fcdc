package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// A DaemonSet rolls out over kwok nodes the way it would over real ones: pods are
// created by kube-controller-manager, bound by kube-scheduler and made ready by
// kwok, and a template change replaces them no more than maxUnavailable at a time.
func TestDaemonSetRollingUpdateOnKwokNodes(t *testing.T) {
	const nodes = 3
	e := New(t, Options{ControllerManager: true, Scheduler: true, Nodes: Nodes(nodes)})
	client := kubernetes.NewForConfigOrDie(e.Config)
	ctx := t.Context()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rollout"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ds, err := client.AppsV1().DaemonSets("rollout").Create(ctx, daemonSet("registry.example/probe:v1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, client, ds, nodes)

	pods, err := client.CoreV1().Pods("rollout").List(ctx, metav1.ListOptions{LabelSelector: "app=probe"})
	if err != nil {
		t.Fatal(err)
	}
	live := map[types.UID]*corev1.Pod{}
	for i := range pods.Items {
		live[pods.Items[i].UID] = &pods.Items[i]
	}
	w, err := client.CoreV1().Pods("rollout").Watch(ctx, metav1.ListOptions{LabelSelector: "app=probe", ResourceVersion: pods.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"probe","image":"registry.example/probe:v2"}]}}}}`)
	if _, err := client.AppsV1().DaemonSets("rollout").Patch(ctx, "probe", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	events, worst := followRollout(t, w, live, nodes, "registry.example/probe:v2")
	if worst > 1 {
		t.Errorf("at some event %d nodes lacked a ready pod; maxUnavailable is 1", worst)
	}
	if worst == 0 {
		t.Errorf("no event showed a node without a ready pod: the watch saw no pod replaced (%d events)", events)
	}
	t.Logf("rollout observed through %d pod events; at most %d node(s) without a ready pod", events, worst)
	waitRolledOut(t, client, ds, nodes)
}

// followRollout follows pod events until every node runs image, and returns
// how many events it saw and the most nodes without a ready pod at once.
func followRollout(t *testing.T, w watch.Interface, live map[types.UID]*corev1.Pod, nodes int, image string) (events, worst int) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for !allUpdated(live, nodes, image) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("pod watch closed before the rollout finished")
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				t.Fatalf("unexpected watch event %s: %v", ev.Type, ev.Object)
			}
			if ev.Type == watch.Deleted {
				delete(live, pod.UID)
			} else {
				live[pod.UID] = pod
			}
			events++
			worst = max(worst, nodes-nodesWithReadyPod(live))
		case <-timeout:
			t.Fatalf("rollout did not finish within 60s; pods: %s", describe(live))
		}
	}
	return events, worst
}

func daemonSet(image string) *appsv1.DaemonSet {
	labels := map[string]string{"app": "probe"}
	maxUnavailable := intstr.FromInt32(1)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "rollout"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &maxUnavailable},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                   []corev1.Container{{Name: "probe", Image: image}},
					AutomountServiceAccountToken: new(false),
				},
			},
		},
	}
}

// waitRolledOut waits until the DaemonSet controller reports every node running
// an available pod of the current template.
func waitRolledOut(t *testing.T, client kubernetes.Interface, ds *appsv1.DaemonSet, nodes int32) {
	t.Helper()
	var last appsv1.DaemonSetStatus
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		if err != nil || got.UID != ds.UID {
			return false, err
		}
		last = got.Status
		s := got.Status
		return s.ObservedGeneration == got.Generation && s.DesiredNumberScheduled == nodes &&
			s.UpdatedNumberScheduled == nodes && s.NumberAvailable == nodes, nil
	})
	if err != nil {
		t.Fatalf("DaemonSet %s did not roll out on %d nodes: %v; status %+v", ds.Name, nodes, err, last)
	}
}

func nodesWithReadyPod(pods map[types.UID]*corev1.Pod) int {
	ready := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && status.PodReady(p) {
			ready[p.Spec.NodeName] = true
		}
	}
	return len(ready)
}

// allUpdated tells whether every node runs exactly one pod, ready, of image.
func allUpdated(pods map[types.UID]*corev1.Pod, nodes int, image string) bool {
	perNode := map[string]int{}
	for _, p := range pods {
		if p.Spec.Containers[0].Image != image || !status.PodReady(p) {
			return false
		}
		perNode[p.Spec.NodeName]++
	}
	if len(perNode) != nodes {
		return false
	}
	for _, n := range perNode {
		if n != 1 {
			return false
		}
	}
	return true
}

func describe(pods map[types.UID]*corev1.Pod) string {
	s := ""
	for _, p := range pods {
		s += fmt.Sprintf("[%s node=%s image=%s ready=%v] ", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, status.PodReady(p))
	}
	return s
}

// With PodsReadyAfter kwok makes a pod ready no sooner than that after its
// creation, as a kubelet waits for a readiness probe's initial delay.
func TestPodsReadyAfter(t *testing.T) {
	const after = 2 * time.Second
	e := New(t, Options{Nodes: Nodes(1), PodsReadyAfter: after})
	client := kubernetes.NewForConfigOrDie(e.Config)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{NodeName: "kwok-0", Containers: []corev1.Container{{Name: "probe", Image: "registry.example/probe:v1"}}}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: pod.Namespace}} // no controller makes it
	if _, err := client.CoreV1().ServiceAccounts(pod.Namespace).Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && status.PodReady(p), err
	})
	if err != nil {
		t.Fatalf("the pod never became ready: %v", err)
	}
	if ready := time.Since(created); ready < after {
		t.Errorf("the pod was ready %s after its creation; want no sooner than %s", ready.Round(time.Millisecond), after)
	}
}
