package metallb

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const upgradeNodes = 50

// An upgrade on 50 nodes: the controller first, then the speakers, paced by
// the DaemonSet's RollingUpdate with the configured maxUnavailable (see
// checkDaemonSet and checkDown), the version reported only once the last node
// runs it, and the memberlist key untouched.
func TestUpgrade(t *testing.T) {
	for _, maxUnavailable := range []string{"1", "10%"} {
		t.Run("maxUnavailable="+maxUnavailable, func(t *testing.T) {
			upgradeStory(t, intstr.Parse(maxUnavailable), nil)
		})
	}
}

// The same upgrade with the operator killed and restarted three times on the
// way: the same end, and never the new version early.
func TestUpgradeAcrossOperatorRestarts(t *testing.T) {
	upgradeStory(t, intstr.FromInt32(1), []int{10, 25, 40})
}

// release returns the module's options for a release: its version and images.
func release(version string) Options {
	opts := testOptions()
	opts.Images = Images{
		Controller:     "registry.example.com/metallb/controller:" + version,
		Speaker:        "registry.example.com/metallb/speaker:" + version,
		ReleaseVersion: version,
	}
	return opts
}

var updatedMessage = regexp.MustCompile(`speaker: (\d+) of 50 nodes updated`)

// upgradeStory deploys release A, then runs release B, restarting the module
// when the number of updated speakers reaches each of restartAt.
func upgradeStory(t *testing.T, maxUnavailable intstr.IntOrString, restartAt []int) {
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(upgradeNodes)}, release("A"))
	ctx := t.Context()
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName},
		Spec: v1beta1.MetalLBSpec{SpeakerConfig: &v1beta1.SpeakerConfig{MaxUnavailable: &maxUnavailable}}}
	if err := m.client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	m.waitStatus(t, "A", 60*time.Second)
	key := m.memberlistKey(t)
	down, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, upgradeNodes, true)
	if err != nil {
		t.Fatal(err)
	}

	w := m.watchUpgrade(t)
	defer w.stop()
	m.stop()
	m.run(t, release("B"))

	var (
		progressMessages = map[string]bool{}
		speakersChanged  bool
		restarts         = restartAt
		lastReady        time.Time
	)
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case <-timeout:
			t.Fatalf("the upgrade did not finish within 3 minutes; pods: %s", w.describe())
		case e := <-w.deployments.ResultChan():
			if d, ok := e.Object.(*appsv1.Deployment); ok {
				w.controller = d
			}
		case e := <-w.daemonSets.ResultChan():
			ds, ok := e.Object.(*appsv1.DaemonSet)
			if !ok {
				continue
			}
			w.checkDaemonSet(t, e.Type, ds, maxUnavailable)
			w.checkDown(t, down)
		case e := <-w.pods.ResultChan():
			pod, ok := e.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if w.update(e.Type, pod) && !speakersChanged {
				speakersChanged = true
				w.assertControllerUpdated(t, "B")
			}
			w.checkDown(t, down)
			if podReady(pod) && strings.HasSuffix(pod.Spec.Containers[0].Image, ":B") {
				lastReady = time.Now()
			}
			if len(restarts) > 0 && w.updated("B") >= restarts[0] {
				restarts = restarts[1:]
				m.stop()
				if v := m.reportedVersion(t); v != "A" {
					t.Fatalf("with %d of %d speakers updated the reported version is %q", w.updated("B"), upgradeNodes, v)
				}
				m.run(t, release("B"))
			}
		case e := <-w.metallbs.ResultChan():
			o, ok := e.Object.(*v1beta1.MetalLB)
			if !ok {
				continue
			}
			if c := meta.FindStatusCondition(o.Status.Conditions, status.Progressing); c != nil && c.Status == metav1.ConditionTrue {
				progressMessages[c.Message] = true
			}
			if o.Status.Version != "B" {
				continue
			}
			// The new version shows: every node must run it, ready.
			m.assertAllSpeakers(t, "B")
			t.Logf("version B reported %s after the last speaker became ready; at most %d nodes were without a ready speaker (maxUnavailable %d)",
				time.Since(lastReady).Round(time.Millisecond), w.maxDown, down)
			m.waitStatus(t, "B", 10*time.Second)
			if got := m.memberlistKey(t); got != key {
				t.Error("the memberlist key changed during the upgrade")
			}
			assertProgressReported(t, progressMessages)
			if len(restarts) > 0 {
				t.Errorf("the upgrade finished before the restarts at %v updated speakers", restarts)
			}
			return
		}
	}
}

// assertProgressReported checks that Progressing told how far the speakers were.
func assertProgressReported(t *testing.T, messages map[string]bool) {
	t.Helper()
	partial := 0
	for msg := range messages {
		if m := updatedMessage.FindStringSubmatch(msg); m != nil && m[1] != "0" && m[1] != "50" {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("no Progressing message said how many of 50 nodes were updated; seen: %v", messages)
	}
}

// waitStatus waits until the tuning object reports version, Available and not
// Progressing.
func (m *moduleEnv) waitStatus(t testing.TB, version string, timeout time.Duration) {
	t.Helper()
	var last v1beta1.MetalLBStatus
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj := &v1beta1.MetalLB{}
		if err := m.client.Get(ctx, clusterObject, obj); err != nil {
			return false, err
		}
		last = obj.Status
		return obj.Status.Version == version &&
			meta.IsStatusConditionTrue(obj.Status.Conditions, status.Available) &&
			meta.IsStatusConditionFalse(obj.Status.Conditions, status.Progressing), nil
	})
	if err != nil {
		t.Fatalf("MetalLB did not report version %s, Available and not Progressing: version %q, conditions %+v", version, last.Version, last.Conditions)
	}
}

func (m *moduleEnv) reportedVersion(t *testing.T) string {
	t.Helper()
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(t.Context(), clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	return obj.Status.Version
}

// assertAllSpeakers checks, with the API server, that a ready speaker of the
// version runs on every node.
func (m *moduleEnv) assertAllSpeakers(t *testing.T, version string) {
	t.Helper()
	pods, err := kubernetes.NewForConfigOrDie(m.Config).CoreV1().Pods(DefaultNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if podReady(&p) && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+version) && p.DeletionTimestamp == nil {
			nodes[p.Spec.NodeName] = true
		}
	}
	if len(nodes) != upgradeNodes {
		t.Errorf("version %s reported while %d of %d nodes run a ready speaker of it", version, len(nodes), upgradeNodes)
	}
}

// upgradeWatch follows the workloads, the speaker pods and the tuning object.
type upgradeWatch struct {
	deployments, daemonSets, pods, metallbs watch.Interface
	speakers                                map[types.UID]*corev1.Pod
	controller                              *appsv1.Deployment
	history                                 map[string][]string // per node, what its speaker pods went through
	speakerDS                               *appsv1.DaemonSet   // as first seen, running release A
	maxDown                                 int                 // most nodes seen without a ready speaker
}

func (m *moduleEnv) watchUpgrade(t testing.TB) *upgradeWatch {
	t.Helper()
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(m.Config)
	pods, err := c.CoreV1().Pods(DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	w := &upgradeWatch{speakers: map[types.UID]*corev1.Pod{}, history: map[string][]string{}}
	for i := range pods.Items {
		w.speakers[pods.Items[i].UID] = &pods.Items[i]
	}
	must := func(wi watch.Interface, err error) watch.Interface {
		if err != nil {
			t.Fatal(err)
		}
		return wi
	}
	w.pods = must(c.CoreV1().Pods(DefaultNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: "component=speaker", ResourceVersion: pods.ResourceVersion}))
	w.deployments = must(c.AppsV1().Deployments(DefaultNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=controller"}))
	w.daemonSets = must(c.AppsV1().DaemonSets(DefaultNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=speaker"}))
	wc, err := clientWithWatch(m.Env)
	if err != nil {
		t.Fatal(err)
	}
	w.metallbs = must(wc.Watch(ctx, &v1beta1.MetalLBList{}))
	return w
}

func (w *upgradeWatch) stop() {
	for _, wi := range []watch.Interface{w.deployments, w.daemonSets, w.pods, w.metallbs} {
		wi.Stop()
	}
}

// update records a pod event; it tells whether a speaker of the old release
// went or one of another appeared.
func (w *upgradeWatch) update(t watch.EventType, pod *corev1.Pod) (changed bool) {
	_, known := w.speakers[pod.UID]
	w.history[pod.Spec.NodeName] = append(w.history[pod.Spec.NodeName], fmt.Sprintf("%s %s %s ready=%v deleting=%v",
		t, pod.Name, pod.Spec.Containers[0].Image, podReady(pod), pod.DeletionTimestamp != nil))
	if t == watch.Deleted {
		delete(w.speakers, pod.UID)
		return true
	}
	w.speakers[pod.UID] = pod
	return !known || pod.DeletionTimestamp != nil
}

// checkDaemonSet fails the test if the operator does anything to the speaker
// DaemonSet but change its template once: the update strategy must stay
// RollingUpdate with no surge and the configured maxUnavailable, the spec
// change once from the generation first seen (release A), and the DaemonSet
// must be neither deleted nor recreated. That is the operator's part of the
// pace; the DaemonSet controller does the rest (see checkDown).
func (w *upgradeWatch) checkDaemonSet(t *testing.T, event watch.EventType, ds *appsv1.DaemonSet, maxUnavailable intstr.IntOrString) {
	t.Helper()
	if event == watch.Deleted {
		t.Fatalf("the speaker DaemonSet was deleted during the upgrade")
	}
	s := ds.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 0 ||
		s.RollingUpdate.MaxUnavailable == nil || *s.RollingUpdate.MaxUnavailable != maxUnavailable {
		t.Fatalf("the speaker DaemonSet's update strategy is %s; want RollingUpdate with maxSurge 0 and maxUnavailable %s", describeStrategy(s), maxUnavailable.String())
	}
	if w.speakerDS == nil {
		w.speakerDS = ds
		return
	}
	if ds.UID != w.speakerDS.UID {
		t.Fatalf("the speaker DaemonSet was recreated during the upgrade")
	}
	if ds.Generation > w.speakerDS.Generation+1 {
		t.Fatalf("the speaker DaemonSet's spec changed %d times during the upgrade; once (release A to B) is all", ds.Generation-w.speakerDS.Generation)
	}
}

func describeStrategy(s appsv1.DaemonSetUpdateStrategy) string {
	if s.RollingUpdate == nil {
		return string(s.Type)
	}
	str := func(v *intstr.IntOrString) string {
		if v == nil {
			return "unset"
		}
		return v.String()
	}
	return fmt.Sprintf("%s, maxSurge %s, maxUnavailable %s", s.Type, str(s.RollingUpdate.MaxSurge), str(s.RollingUpdate.MaxUnavailable))
}

// checkDown records how many nodes lack a ready speaker. More than allowed is
// logged, not failed: the operator only sets the pace (checkDaemonSet), and the
// DaemonSet controller does not keep it to the pod. It acts on its informer
// cache, guarded by expectations that count deletions without naming the pods,
// and it counts a deletion observed on every update of a terminating pod as
// well as on its removal (kubernetes/kubernetes#77773); observations of pods it
// deleted earlier can so satisfy the expectation of its latest deletion before
// its cache shows it, and its next sync counts the pod just deleted as
// available and deletes one more. Under load that takes a node or two more
// than maxUnavailable down for a moment, the DaemonSet's own status saying so;
// there is no bound upstream promises, so none is asserted here.
func (w *upgradeWatch) checkDown(t *testing.T, allowed int) {
	t.Helper()
	ready := map[string]bool{}
	for _, p := range w.speakers {
		if p.Spec.NodeName != "" && podReady(p) {
			ready[p.Spec.NodeName] = true
		}
	}
	down := upgradeNodes - len(ready)
	if down > allowed && down > w.maxDown {
		t.Logf("%d nodes without a ready speaker, maxUnavailable %d, the DaemonSet controller running ahead of its cache; their pods:\n%s", down, allowed, w.describeDown(ready))
	}
	w.maxDown = max(w.maxDown, down)
}

// describeDown tells what the speaker pods of the nodes not in ready went through.
func (w *upgradeWatch) describeDown(ready map[string]bool) string {
	var b strings.Builder
	for _, node := range testenv.Nodes(upgradeNodes) {
		if !ready[node.Name] {
			fmt.Fprintf(&b, "%s:\n\t%s\n", node.Name, strings.Join(w.history[node.Name], "\n\t"))
		}
	}
	return b.String()
}

func (w *upgradeWatch) updated(version string) int {
	n := 0
	for _, p := range w.speakers {
		if strings.HasSuffix(p.Spec.Containers[0].Image, ":"+version) && podReady(p) {
			n++
		}
	}
	return n
}

// assertControllerUpdated checks that the controller runs version, available,
// before any speaker changes.
func (w *upgradeWatch) assertControllerUpdated(t *testing.T, version string) {
	t.Helper()
	d := w.controller
	if d == nil || !strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":"+version) ||
		d.Status.UpdatedReplicas < 1 || d.Status.AvailableReplicas < 1 || d.Status.ObservedGeneration < d.Generation {
		t.Fatalf("a speaker changed before the controller was updated and available: %s", describeDeployment(d))
	}
}

func describeDeployment(d *appsv1.Deployment) string {
	if d == nil {
		return "no controller Deployment seen"
	}
	return fmt.Sprintf("controller image %s, updated %d, available %d, generation %d observed %d", d.Spec.Template.Spec.Containers[0].Image,
		d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Generation, d.Status.ObservedGeneration)
}

func (w *upgradeWatch) describe() string {
	counts := map[string]int{}
	for _, p := range w.speakers {
		counts[fmt.Sprintf("%s ready=%v", p.Spec.Containers[0].Image, podReady(p))]++
	}
	return fmt.Sprint(counts)
}
