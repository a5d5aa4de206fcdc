package metallb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

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
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
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
