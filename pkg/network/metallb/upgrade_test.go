package metallb

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
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
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const upgradeNodes = 50

// An upgrade on 50 nodes: the controller first, then the speakers, paced by
// the DaemonSet's RollingUpdate with the configured maxUnavailable, the
// version reported only once the last node runs it, and the memberlist key
// untouched. What the operator does is asserted strictly (checkDaemonSet,
// checkSpeakersAfterController, assertAllSpeakers); the pace the DaemonSet
// controller keeps, within the bound testenv.PrematureSyncs explains.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	for _, maxUnavailable := range []string{"1", "10%"} {
		t.Run("maxUnavailable="+maxUnavailable, func(t *testing.T) {
			upgradeStory(t, startModule(t, upgradeEnv, releaseOptions("A")), intstr.Parse(maxUnavailable), nil)
		})
	}
}

// upgradeEnv is the control plane of upgradeStory.
var upgradeEnv = testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(upgradeNodes)}

// The same upgrade with the operator killed and restarted three times on the
// way: the same end, and never the new version early.
func TestUpgradeAcrossOperatorRestarts(t *testing.T) {
	t.Parallel()
	upgradeStory(t, startModule(t, upgradeEnv, releaseOptions("A")), intstr.FromInt32(1), []int{10, 25, 40})
}

// releaseOptions returns the module's options for a release: its version and images.
func releaseOptions(version string) Options {
	opts := testOptions()
	opts.Images = manifests.Images{
		Controller:     "registry.example.com/metallb/controller:" + version,
		Speaker:        "registry.example.com/metallb/speaker:" + version,
		ReleaseVersion: version,
	}
	return opts
}

var updatedMessage = regexp.MustCompile(`speaker: (\d+) of 50 nodes updated`)

// upgradeStory deploys release A with m, the module running it, then runs
// release B, restarting the module when the number of updated speakers
// reaches each of restartAt.
func upgradeStory(t *testing.T, m *moduleEnv, maxUnavailable intstr.IntOrString, restartAt []int) {
	key := m.runningA(t, maxUnavailable)
	down, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, upgradeNodes, true)
	if err != nil {
		t.Fatal(err)
	}

	w := m.watchUpgrade(t)
	defer w.stop()
	w.maxUnavailable, w.restarts = maxUnavailable, restartAt
	m.stop()
	m.run(t, releaseOptions("B"))
	w.follow(t, m, "B")
	w.assertPace(t, down)
	m.waitStatus(t, "B", m.within(10*time.Second))
	if got := m.memberlistKey(t); got != key {
		t.Error("the memberlist key changed during the upgrade")
	}
	w.assertProgressReported(t)
	if len(w.restarts) > 0 {
		t.Errorf("the upgrade finished before the restarts at %v updated speakers", w.restarts)
	}
}

// runningA creates the MetalLB object with maxUnavailable, waits until
// release A runs, and returns its memberlist key.
func (m *moduleEnv) runningA(t *testing.T, maxUnavailable intstr.IntOrString) string {
	t.Helper()
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName},
		Spec: v1beta1.MetalLBSpec{SpeakerConfig: &v1beta1.SpeakerConfig{MaxUnavailable: &maxUnavailable}}}
	if err := m.client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	m.waitStatus(t, "A", m.within(time.Minute))
	return m.memberlistKey(t)
}

// follow follows the upgrade to version until the MetalLB object reports it,
// checking each step, and restarting the module where asked.
func (w *upgradeWatch) follow(t *testing.T, m *moduleEnv, version string) {
	t.Helper()
	bound := m.within(3 * time.Minute)
	timeout := time.After(bound)
	for {
		select {
		case <-timeout:
			t.Fatalf("the upgrade did not finish within %s; pods: %s", bound, w.describe())
		case e := <-w.daemonSets.ResultChan():
			if ds, ok := e.Object.(*appsv1.DaemonSet); ok {
				w.checkDaemonSet(t, e.Type, ds)
				w.checkSpeakersAfterController(t, m, ds, version)
			}
		case e := <-w.pods.ResultChan():
			if pod, ok := e.Object.(*corev1.Pod); ok {
				w.update(e.Type, pod)
				w.recordStep(version)
				w.recordDown()
				w.restartAt(t, m, version)
			}
		case e := <-w.metallbs.ResultChan():
			if o, ok := e.Object.(*v1beta1.MetalLB); ok && w.reported(o, version) {
				w.versionAt = time.Now()
				// The new version shows: every node must run it, ready.
				m.assertAllSpeakers(t, version)
				return
			}
		}
	}
}

// reported records the progress a MetalLB object tells and whether it
// reports version.
func (w *upgradeWatch) reported(o *v1beta1.MetalLB, version string) bool {
	if c := meta.FindStatusCondition(o.Status.Conditions, status.Progressing); c != nil && c.Status == metav1.ConditionTrue && !w.progress[c.Message] {
		w.progress[c.Message] = true
		if m := updatedMessage.FindStringSubmatch(c.Message); m != nil {
			n, _ := strconv.Atoi(m[1])
			w.updatedReports = append(w.updatedReports, updatedReport{nodes: n, at: time.Now()})
		}
	}
	return o.Status.Version == version
}

// recordStep records when the speakers updated to version and ready first
// reach each tenth of the nodes.
func (w *upgradeWatch) recordStep(version string) {
	for tenth, updated := 1, w.updated(version); tenth < 10 && tenth*upgradeNodes/10 <= updated; tenth++ {
		if _, ok := w.stepAt[tenth]; !ok {
			w.stepAt[tenth] = time.Now()
		}
	}
}

// restartAt restarts the module when the updated speakers reach the next
// restart point; meanwhile the old version must still be reported.
func (w *upgradeWatch) restartAt(t *testing.T, m *moduleEnv, version string) {
	t.Helper()
	if len(w.restarts) == 0 || w.updated(version) < w.restarts[0] {
		return
	}
	w.restarts = w.restarts[1:]
	m.stop()
	if v := m.reportedVersion(t); v == version {
		t.Fatalf("with %d of %d speakers updated the reported version is %q", w.updated(version), upgradeNodes, v)
	}
	m.run(t, releaseOptions(version))
}

// progressGap bounds how long a tenth of the nodes updated goes unreported,
// faults or not: a progress write is due at each tenth of the nodes updated
// and ready, and a failed one is tried again within
// transient.MaxFailureBackoff.
const progressGap = 15 * time.Second

// updatedReport is a Progressing message saying how many nodes were
// updated, and when it was first seen.
type updatedReport struct {
	nodes int
	at    time.Time
}

// assertProgressReported checks that Progressing told how far the speakers
// were: some message with a count short of all the nodes, and each tenth of
// the nodes updated and ready within progressGap, by a message counting as
// many or by the version reported.
func (w *upgradeWatch) assertProgressReported(t *testing.T) {
	t.Helper()
	for tenth, at := range w.stepAt {
		nodes, reportedAt := tenth*upgradeNodes/10, w.versionAt
		if i := slices.IndexFunc(w.updatedReports, func(r updatedReport) bool { return r.nodes >= nodes }); i >= 0 {
			reportedAt = w.updatedReports[i].at
		}
		if lag := reportedAt.Sub(at); lag > progressGap {
			t.Errorf("the rollout's progress went unreported for %s: %d of %d nodes were updated and ready; want at most %s", lag.Round(time.Millisecond), nodes, upgradeNodes, progressGap)
		}
	}
	if !slices.ContainsFunc(w.updatedReports, func(r updatedReport) bool { return r.nodes > 0 && r.nodes < upgradeNodes }) {
		t.Errorf("no Progressing message said how many of 50 nodes were updated; seen: %v", w.progress)
	}
}

// waitStatus waits until the MetalLB object reports version, Available and not
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
	pods, err := kubernetes.NewForConfigOrDie(m.Config).CoreV1().Pods(manifests.DefaultNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if status.PodReady(&p) && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+version) && p.DeletionTimestamp == nil {
			nodes[p.Spec.NodeName] = true
		}
	}
	if len(nodes) != upgradeNodes {
		t.Errorf("version %s reported while %d of %d nodes run a ready speaker of it", version, len(nodes), upgradeNodes)
	}
}

// upgradeWatch follows the speaker DaemonSet, its pods and the MetalLB object.
type upgradeWatch struct {
	daemonSets, pods, metallbs watch.Interface
	speakers                   map[types.UID]*corev1.Pod
	history                    map[string][]string // per node, what its speaker pods went through
	speakerDS                  *appsv1.DaemonSet   // as first seen, running release A
	maxUnavailable             intstr.IntOrString
	restarts                   []int             // updated speakers at which to restart the module
	progress                   map[string]bool   // Progressing messages seen
	updatedReports             []updatedReport   // those counting nodes updated, in order
	stepAt                     map[int]time.Time // when each tenth of the nodes was updated and ready
	versionAt                  time.Time         // when the new version was reported
	maxDown                    int               // most nodes seen without a ready speaker
	downAt                     string            // what their pods went through, then
}

func (m *moduleEnv) watchUpgrade(t testing.TB) *upgradeWatch {
	t.Helper()
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(m.Config)
	pods, err := c.CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	w := &upgradeWatch{speakers: map[types.UID]*corev1.Pod{}, history: map[string][]string{}, progress: map[string]bool{}, stepAt: map[int]time.Time{}}
	for i := range pods.Items {
		w.speakers[pods.Items[i].UID] = &pods.Items[i]
	}
	must := func(wi watch.Interface, err error) watch.Interface {
		if err != nil {
			t.Fatal(err)
		}
		return wi
	}
	w.pods = must(c.CoreV1().Pods(manifests.DefaultNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: "component=speaker", ResourceVersion: pods.ResourceVersion}))
	w.daemonSets = must(c.AppsV1().DaemonSets(manifests.DefaultNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=speaker"}))
	wc, err := clientWithWatch(m.Env)
	if err != nil {
		t.Fatal(err)
	}
	w.metallbs = must(wc.Watch(ctx, &v1beta1.MetalLBList{}))
	return w
}

func (w *upgradeWatch) stop() {
	for _, wi := range []watch.Interface{w.daemonSets, w.pods, w.metallbs} {
		wi.Stop()
	}
}

// update records a pod event; it tells whether a speaker of the old release
// went or one of another appeared.
func (w *upgradeWatch) update(t watch.EventType, pod *corev1.Pod) (changed bool) {
	_, known := w.speakers[pod.UID]
	w.history[pod.Spec.NodeName] = append(w.history[pod.Spec.NodeName], fmt.Sprintf("%s %s %s ready=%v deleting=%v",
		t, pod.Name, pod.Spec.Containers[0].Image, status.PodReady(pod), pod.DeletionTimestamp != nil))
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
// must be neither deleted nor recreated.
func (w *upgradeWatch) checkDaemonSet(t *testing.T, event watch.EventType, ds *appsv1.DaemonSet) {
	t.Helper()
	if event == watch.Deleted {
		t.Fatalf("the speaker DaemonSet was deleted during the upgrade")
	}
	s := ds.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 0 ||
		s.RollingUpdate.MaxUnavailable == nil || *s.RollingUpdate.MaxUnavailable != w.maxUnavailable {
		t.Fatalf("the speaker DaemonSet's update strategy is %s; want RollingUpdate with maxSurge 0 and maxUnavailable %s", describeStrategy(s), w.maxUnavailable.String())
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

// checkSpeakersAfterController fails the test if the speaker DaemonSet's spec
// changed before the controller finished rolling out version. The controller,
// once rolled out, stays so: reading it when the DaemonSet's change is seen
// shows it at least as far as the operator saw it when it made the change.
func (w *upgradeWatch) checkSpeakersAfterController(t *testing.T, m *moduleEnv, ds *appsv1.DaemonSet, version string) {
	t.Helper()
	if ds.Generation == w.speakerDS.Generation {
		return
	}
	d := m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName)
	if c := status.RolloutOf(d, manifests.ReleaseVersionAnnotation); c.Version != version || !c.Done() {
		t.Fatalf("the speaker DaemonSet changed before the controller rolled out %s: %s", version, c.Message())
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

// recordDown records the most nodes seen at once without a ready speaker,
// and what their pods went through.
func (w *upgradeWatch) recordDown() {
	ready := map[string]bool{}
	for _, p := range w.speakers {
		if p.Spec.NodeName != "" && status.PodReady(p) {
			ready[p.Spec.NodeName] = true
		}
	}
	if down := upgradeNodes - len(ready); down > w.maxDown {
		w.maxDown, w.downAt = down, w.describeDown(ready)
	}
}

// assertPace checks that the speakers were replaced at the DaemonSet's pace.
func (w *upgradeWatch) assertPace(t *testing.T, maxUnavailable int) {
	t.Helper()
	if w.maxDown == 0 {
		t.Fatal("no node was ever without a ready speaker: the watch saw no speaker replaced")
	}
	if bound := testenv.PaceBound(maxUnavailable); w.maxDown > bound {
		t.Errorf("%d nodes were without a ready speaker at once, maxUnavailable %d (at most %d allowed for the DaemonSet controller, see testenv.PrematureSyncs); their pods:\n%s",
			w.maxDown, maxUnavailable, bound, w.downAt)
	}
	t.Logf("at most %d nodes were without a ready speaker at once (maxUnavailable %d)", w.maxDown, maxUnavailable)
}

func (w *upgradeWatch) updated(version string) int {
	n := 0
	for _, p := range w.speakers {
		if strings.HasSuffix(p.Spec.Containers[0].Image, ":"+version) && status.PodReady(p) {
			n++
		}
	}
	return n
}

func (w *upgradeWatch) describe() string {
	counts := map[string]int{}
	for _, p := range w.speakers {
		counts[fmt.Sprintf("%s ready=%v", p.Spec.Containers[0].Image, status.PodReady(p))]++
	}
	return fmt.Sprint(counts)
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
