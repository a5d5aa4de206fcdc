package e2e

import (
	"strconv"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// workloadEvent is one change of a workload in MetalLB's namespace, as the API
// server ordered it.
type workloadEvent struct {
	key     string // "Kind/name"
	rv      int64
	deleted bool
	// changed: its spec differs from what it was when the watch began (or it
	// was created since); done: its controller has rolled that spec out on
	// every pod (node, for a DaemonSet), all of them available.
	changed, done bool
}

// workloadOrder records the changes of MetalLB's and frr-k8s's workloads, to
// tell in which order the operator wrote them and they rolled out.
type workloadOrder struct {
	mu     sync.Mutex
	events []workloadEvent
	start  map[string]int64 // generation when the watch began
}

// watchWorkloads starts recording until the test ends.
func (c *metallbCluster) watchWorkloads(t *testing.T) *workloadOrder {
	t.Helper()
	o := &workloadOrder{start: map[string]int64{}}
	ds, err := c.Client.AppsV1().DaemonSets(metallbNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := c.Client.AppsV1().Deployments(metallbNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds.Items {
		o.start["DaemonSet/"+d.Name] = d.Generation
	}
	for _, d := range deps.Items {
		o.start["Deployment/"+d.Name] = d.Generation
	}
	dsWatch, err := c.Client.AppsV1().DaemonSets(metallbNamespace).Watch(t.Context(), metav1.ListOptions{ResourceVersion: ds.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	depWatch, err := c.Client.AppsV1().Deployments(metallbNamespace).Watch(t.Context(), metav1.ListOptions{ResourceVersion: deps.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dsWatch.Stop)
	t.Cleanup(depWatch.Stop)
	go o.record(dsWatch.ResultChan())
	go o.record(depWatch.ResultChan())
	return o
}

func (o *workloadOrder) record(events <-chan watch.Event) {
	for e := range events {
		var ev workloadEvent
		switch w := e.Object.(type) {
		case *appsv1.DaemonSet:
			ev = o.event("DaemonSet/"+w.Name, w.ObjectMeta, w.Status.ObservedGeneration == w.Generation &&
				w.Status.UpdatedNumberScheduled == w.Status.DesiredNumberScheduled && w.Status.NumberAvailable == w.Status.DesiredNumberScheduled)
		case *appsv1.Deployment:
			ev = o.event("Deployment/"+w.Name, w.ObjectMeta, w.Status.ObservedGeneration == w.Generation &&
				w.Status.UpdatedReplicas == w.Status.Replicas && w.Status.AvailableReplicas == w.Status.Replicas)
		default:
			continue
		}
		ev.deleted = e.Type == watch.Deleted
		o.mu.Lock()
		o.events = append(o.events, ev)
		o.mu.Unlock()
	}
}

func (o *workloadOrder) event(key string, m metav1.ObjectMeta, done bool) workloadEvent {
	rv, _ := strconv.ParseInt(m.ResourceVersion, 10, 64)
	start, existed := o.start[key]
	changed := !existed || m.Generation > start
	return workloadEvent{key: key, rv: rv, changed: changed, done: changed && done}
}

// first returns the resourceVersion of the first event of key that ok
// accepts, and whether there is one.
func (o *workloadOrder) first(key string, ok func(workloadEvent) bool) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.events {
		if e.key == key && ok(e) {
			return e.rv, true
		}
	}
	return 0, false
}

// mark is a moment of the story: a workload's first change, its rollout of
// that change, or its deletion.
type mark struct {
	what string
	rv   int64
	ok   bool
}

func (o *workloadOrder) changed(key string) mark {
	rv, ok := o.first(key, func(e workloadEvent) bool { return e.changed && !e.deleted })
	return mark{key + " changed", rv, ok}
}

func (o *workloadOrder) rolledOut(key string) mark {
	rv, ok := o.first(key, func(e workloadEvent) bool { return e.done && !e.deleted })
	return mark{key + " rolled out on every pod", rv, ok}
}

func (o *workloadOrder) deleted(key string) mark {
	rv, ok := o.first(key, func(e workloadEvent) bool { return e.deleted })
	return mark{key + " deleted", rv, ok}
}

// assertBefore checks that a happened, and before b, by resourceVersion.
func (o *workloadOrder) assertBefore(t *testing.T, a, b mark) {
	t.Helper()
	switch {
	case !a.ok || !b.ok:
		t.Errorf("want %s (seen: %t) before %s (seen: %t)", a.what, a.ok, b.what, b.ok)
	case a.rv >= b.rv:
		t.Errorf("%s at resourceVersion %d, not before %s at %d", a.what, a.rv, b.what, b.rv)
	}
}
