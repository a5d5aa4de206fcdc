package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// promises watches, from the test's side, what the operator promises
// whichever write was its last: the memberlist key made once and never
// changed or deleted, never more speakers down than the rollout allows once
// all ran, and the version reported only when every speaker runs the
// release. Each broken promise is kept, with when it was seen.
type promises struct {
	client  kubernetes.Interface
	dyn     dynamic.Interface
	stop    chan struct{}
	nodes   int
	release string // the speaker image of the version checked
	version string
	// maxUnavailable is the MetalLB object's: no speaker DaemonSet the
	// operator writes may let its rollouts take more down.
	maxUnavailable int

	mu       sync.Mutex
	key      []byte
	allRan   bool
	mostDown int
	downAt   string // the speakers then
	broken   []string
}

// watchPromises starts the watches; stop ends them.
func watchPromises(t *testing.T, client kubernetes.Interface, dyn dynamic.Interface, s crashStory, version string) *promises {
	p := &promises{client: client, nodes: s.nodes, version: version, release: s.speakerImage, maxUnavailable: s.maxUnavailable}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(metallbNamespace))
	secrets, pods := f.Core().V1().Secrets().Informer(), f.Core().V1().Pods().Informer()
	handle(t, secrets, cache.ResourceEventHandlerFuncs{AddFunc: p.keySeen, UpdateFunc: func(_, o any) { p.keySeen(o) }, DeleteFunc: p.keyDeleted})
	handle(t, pods, cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { p.countDown(pods) }, UpdateFunc: func(any, any) { p.countDown(pods) }, DeleteFunc: func(any) { p.countDown(pods) }})
	handle(t, f.Apps().V1().DaemonSets().Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc: p.strategySeen, UpdateFunc: func(_, o any) { p.strategySeen(o) }})
	f.Start(stop)
	p.stop, p.dyn = stop, dyn
	return p
}

// watchVersion starts the watch of the MetalLB object, its CRD served and
// the version not reported yet: each report the watch sees after is checked.
func (p *promises) watchVersion(t *testing.T) {
	if p.version == "" {
		return
	}
	d := dynamicinformer.NewFilteredDynamicSharedInformerFactory(p.dyn, 0, metallbNamespace, nil)
	handle(t, d.ForResource(metallbs).Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if reportedVersion(o) == p.version {
				p.breaks("%s was reported before the story's step: its report cannot be checked", p.version)
			}
		},
		UpdateFunc: func(old, o any) { p.versionSeen(t, old, o) }})
	d.Start(p.stop)
	d.WaitForCacheSync(p.stop)
}

func handle(t *testing.T, informer cache.SharedIndexInformer, h cache.ResourceEventHandler) {
	t.Helper()
	if _, err := informer.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
}

func (p *promises) breaks(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.broken = append(p.broken, fmt.Sprintf(format, args...))
}

func (p *promises) keySeen(o any) {
	s, ok := o.(*corev1.Secret)
	if !ok || s.Name != "memberlist" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := s.Data["secretkey"]
	switch {
	case p.key == nil:
		p.key = key
	case !bytes.Equal(p.key, key):
		p.broken = append(p.broken, "the memberlist key changed")
	}
}

func (p *promises) keyDeleted(o any) {
	if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = tomb.Obj
	}
	if s, ok := o.(*corev1.Secret); ok && s.Name == "memberlist" {
		p.breaks("the memberlist Secret was deleted")
	}
}

// countDown counts the nodes without a ready speaker, once every node had one.
func (p *promises) countDown(pods cache.SharedIndexInformer) {
	up := map[string]bool{}
	var seen []string
	for _, o := range pods.GetStore().List() {
		pod := o.(*corev1.Pod)
		if pod.Labels["component"] != "speaker" {
			continue
		}
		if pod.DeletionTimestamp == nil && status.PodReady(pod) {
			up[pod.Spec.NodeName] = true
		}
		seen = append(seen, fmt.Sprintf("%s on %q ready=%v deleted=%v", pod.Name, pod.Spec.NodeName, status.PodReady(pod), pod.DeletionTimestamp != nil))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allRan = p.allRan || len(up) == p.nodes
	if p.allRan && p.nodes-len(up) > p.mostDown {
		p.mostDown, p.downAt = p.nodes-len(up), strings.Join(seen, "; ")
	}
}

// versionSeen checks, when the MetalLB object comes to report the version,
// that every speaker the API server has runs the release and is ready.
func (p *promises) versionSeen(t *testing.T, old, o any) {
	if reportedVersion(o) != p.version || reportedVersion(old) == p.version {
		return
	}
	pods, err := p.client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		p.breaks("listing the speakers when %s was reported: %v", p.version, err)
		return
	}
	ready := 0
	for _, pod := range pods.Items {
		switch {
		case pod.DeletionTimestamp != nil:
		case pod.Spec.Containers[0].Image != p.release:
			p.breaks("%s was reported while the speaker %s ran %s", p.version, pod.Name, pod.Spec.Containers[0].Image)
		case status.PodReady(&pod):
			ready++
		}
	}
	if ready != p.nodes {
		var seen []string
		for _, pod := range pods.Items {
			seen = append(seen, fmt.Sprintf("%s on %q ready=%v deleted=%v", pod.Name, pod.Spec.NodeName, status.PodReady(&pod), pod.DeletionTimestamp != nil))
		}
		p.breaks("%s was reported while %d of %d speakers were ready: %v; the object: %v", p.version, ready, p.nodes, seen, o.(*unstructured.Unstructured).Object["status"])
	}
}

func reportedVersion(o any) string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	v, _, _ := unstructured.NestedString(u.Object, "status", "version")
	return v
}

// check fails the test on each broken promise.
func (p *promises) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.broken {
		t.Error(b)
	}
}

// checkDown fails the test when more speakers were down at once, after all
// ran, than a rollout with the object's maxUnavailable takes down here
// (testenv.PaceBound: the DaemonSet controller may run ahead of it under
// load; the maxUnavailable the operator writes is checked strictly).
func (p *promises) checkDown(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if bound := testenv.PaceBound(p.maxUnavailable); p.mostDown > bound {
		t.Errorf("%d speakers were down at once, more than %d (maxUnavailable %d, see testenv.PrematureSyncs): %s", p.mostDown, bound, p.maxUnavailable, p.downAt)
	}
}

// strategySeen checks that the speaker DaemonSet rolls its pods with at
// most the object's maxUnavailable.
func (p *promises) strategySeen(o any) {
	ds, ok := o.(*appsv1.DaemonSet)
	if !ok || ds.Name != "speaker" {
		return
	}
	u := ds.Spec.UpdateStrategy
	if u.Type != appsv1.RollingUpdateDaemonSetStrategyType || u.RollingUpdate == nil || u.RollingUpdate.MaxUnavailable == nil {
		p.breaks("the speaker DaemonSet's update strategy is %+v, not a rolling update with maxUnavailable", u)
		return
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(u.RollingUpdate.MaxUnavailable, p.nodes, true)
	if err != nil || n > p.maxUnavailable {
		p.breaks("the speaker DaemonSet lets %s speakers down at once, more than the MetalLB object's %d", u.RollingUpdate.MaxUnavailable, p.maxUnavailable)
	}
}
