package metallb

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// BenchmarkRender renders MetalLB's objects for the default settings, as every
// reconcile does. Goal: under 2 ms.
func BenchmarkRender(b *testing.B) {
	images, err := ImagesFromEnv(func(string) string { return "" }, "1.0.0")
	if err != nil {
		b.Fatal(err)
	}
	s, err := SettingsFor(Environment{Namespace: DefaultNamespace, Images: images, Webhooks: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	key := NewMemberlistKey()
	if _, err := Render(s, key); err != nil { // parse the templates outside the loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(s, key); err != nil {
			b.Fatal(err)
		}
	}
	reportGoal(b, float64(b.Elapsed().Microseconds())/1000/float64(b.N), 2, "ms/render")
}

// reportGoal reports a figure with its goal beside it, and fails the
// benchmark when the figure misses the goal (a figure above it).
func reportGoal(b *testing.B, figure, goal float64, unit string) {
	b.Helper()
	b.ReportMetric(figure, unit)
	b.ReportMetric(goal, "goal-"+unit)
	if figure > goal {
		b.Errorf("%s: %.3g, over the goal of %.3g", unit, figure, goal)
	}
}

// BenchmarkActivation measures the time from creating the first IPAddressPool
// to both the controller Deployment and the speaker DaemonSet existing, with
// the module running against a real API server (goal: p50 under 200 ms). Each
// iteration then deletes the pool and waits for the workloads to go.
func BenchmarkActivation(b *testing.B) {
	m := startModule(b, testenv.Options{}, testOptions())
	m.waitCRDs(b)
	// The API server's first IPAddressPool costs it two seconds of set-up: make
	// it outside the measure, where MetalLB ignores it.
	m.createPool(b, "default", "warm-up")
	clientset := kubernetes.NewForConfigOrDie(m.Config)
	ctx := context.Background()
	var latencies []time.Duration
	for i := 0; b.Loop(); i++ {
		w := watchWorkloads(b, clientset)
		start := time.Now()
		pool := m.createPool(b, DefaultNamespace, fmt.Sprintf("pool%d", i))
		w.waitBoth(b, watch.Added)
		latencies = append(latencies, time.Since(start))
		if err := m.client.Delete(ctx, pool); err != nil {
			b.Fatal(err)
		}
		w.waitBoth(b, watch.Deleted)
		w.stop()
		// The last objects pruned are the service accounts: then the module is idle.
		waitFor(b, "deactivation", 30*time.Second, func(context.Context) (bool, error) {
			return m.get(b, serviceAccountGVK, DefaultNamespace, "controller") == nil, nil
		})
	}
	slices.Sort(latencies)
	reportGoal(b, float64(latencies[len(latencies)/2].Microseconds())/1000, 200, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1000, "max-ms")
}

// workloadWatch reports the controller Deployment's and the speaker DaemonSet's events.
type workloadWatch struct {
	deployments, daemonSets watch.Interface
}

func watchWorkloads(b *testing.B, c kubernetes.Interface) *workloadWatch {
	b.Helper()
	ctx := context.Background()
	d, err := c.AppsV1().Deployments(DefaultNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=controller"})
	if err != nil {
		b.Fatal(err)
	}
	ds, err := c.AppsV1().DaemonSets(DefaultNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=speaker"})
	if err != nil {
		b.Fatal(err)
	}
	return &workloadWatch{deployments: d, daemonSets: ds}
}

// waitBoth waits for an event of the type on each workload.
func (w *workloadWatch) waitBoth(b *testing.B, want watch.EventType) {
	b.Helper()
	for _, ch := range []<-chan watch.Event{w.deployments.ResultChan(), w.daemonSets.ResultChan()} {
		timeout := time.After(30 * time.Second)
		for seen := false; !seen; {
			select {
			case e := <-ch:
				seen = e.Type == want
			case <-timeout:
				b.Fatalf("no %s event within 30s", want)
			}
		}
	}
}

func (w *workloadWatch) stop() {
	w.deployments.Stop()
	w.daemonSets.Stop()
}

// BenchmarkVersionReport measures, over upgrades of 10 kwok nodes, the time from
// the last speaker pod of the new release becoming ready to the new version
// being reported (goal: p50 under 1 s).
func BenchmarkVersionReport(b *testing.B) {
	const nodes = 10
	m := startModule(b, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(nodes)}, releaseOptions("v0"))
	if err := m.client.Create(context.Background(), &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}); err != nil {
		b.Fatal(err)
	}
	m.waitStatus(b, "v0", time.Minute)
	var delays []time.Duration
	for i := 1; b.Loop(); i++ {
		version := fmt.Sprintf("v%d", i)
		w := m.watchUpgrade(b)
		m.stop()
		m.run(b, releaseOptions(version))
		delays = append(delays, w.versionDelay(b, version, nodes))
		w.stop()
		m.waitStatus(b, version, time.Minute)
	}
	slices.Sort(delays)
	reportGoal(b, float64(delays[len(delays)/2].Microseconds())/1000, 1000, "p50-ms")
	b.ReportMetric(float64(delays[len(delays)-1].Microseconds())/1000, "max-ms")
}

// versionDelay follows an upgrade to version on n nodes and returns the time
// from its last speaker becoming ready to the version being reported.
func (w *upgradeWatch) versionDelay(b *testing.B, version string, n int) time.Duration {
	var lastReady time.Time
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case <-timeout:
			b.Fatalf("version %s not reported within 2 minutes", version)
		case e := <-w.pods.ResultChan():
			if pod, ok := e.Object.(*corev1.Pod); ok {
				w.update(e.Type, pod)
				if w.updated(version) == n && lastReady.IsZero() {
					lastReady = time.Now()
				}
			}
		case e := <-w.metallbs.ResultChan():
			if o, ok := e.Object.(*v1beta1.MetalLB); ok && o.Status.Version == version {
				if lastReady.IsZero() {
					b.Fatalf("version %s reported before every speaker ran it", version)
				}
				return time.Since(lastReady)
			}
		}
	}
}

// BenchmarkIdleReconcile measures a reconcile of an active MetalLB, with the
// upstream operator's tuning object (whose schema and rules each reconcile
// checks), when nothing changed: what every watch event costs (reads come
// from the cache, no write). Goal: under 10 ms, so that a burst of a hundred
// events costs a second.
func BenchmarkIdleReconcile(b *testing.B) {
	m := startModule(b, testenv.Options{}, testOptions())
	m.waitCRDs(b)
	m.createPool(b, DefaultNamespace, "pool1")
	m.create(b, filepath.Join("testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitSpeakerDaemonSet(b)
	settle(b, m)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.r.Reconcile(ctx, request); err != nil {
			b.Fatal(err)
		}
	}
	reportGoal(b, float64(b.Elapsed().Microseconds())/1000/float64(b.N), 10, "ms/reconcile")
}
