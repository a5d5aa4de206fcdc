package maintenance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodecache"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// page is how many Nodes a read of their metadata takes at a time.
const page = 100

// Reconcile decides which nodes leave MetalLB's announcements and which
// return, and changes them. The cache keeps no labels: it reads from the API
// server the metadata of the nodes that may need a decision, and of a few
// others that announce, enough to tell the last node of each advertisement,
// never every Node's.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	scope := r.scope.Load()
	if scope == nil {
		return reconcile.Result{}, nil
	}
	cached, err := nodecache.All(ctx, r.cache)
	if err != nil {
		return reconcile.Result{}, err
	}
	candidates, err := r.candidates(ctx, scope.Signals, cached)
	if err != nil {
		return reconcile.Result{}, err // the last report stands until a decision replaces it
	}
	if len(candidates) == 0 {
		r.setReport(decide.Report{})
		return reconcile.Result{}, nil
	}
	byName := make(map[string]*nodecache.Node, len(cached))
	for _, n := range cached {
		byName[n.Name] = n
	}
	if err := r.watchSpeakers(); err != nil {
		return reconcile.Result{}, err
	}
	speakers, err := r.readySpeakers(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	var nodes []decide.Node
	for _, m := range candidates {
		nodes = append(nodes, decide.Node{Node: nodeOf(m, byName[m.Name]), SpeakerReady: speakers[m.Name]})
	}
	others, err := r.announcingOthers(ctx, scope.Advertisements, candidates, byName, speakers)
	if err != nil {
		return reconcile.Result{}, err
	}
	d := decide.Decide(scope.Signals, append(nodes, others...), scope.Advertisements)
	err = r.act(ctx, d)
	r.tellHeld(d.Held)
	r.setReport(decide.ReportOf(d, nodes))
	return reconcile.Result{}, err
}

// candidates reads the metadata of the nodes that may need a decision: those
// that carry a label signal, read by its selector, and those the cache shows
// marked or with another signal.
func (r *Reconciler) candidates(ctx context.Context, s decide.Signals, cached []*nodecache.Node) (map[string]*metav1.PartialObjectMetadata, error) {
	found := map[string]*metav1.PartialObjectMetadata{}
	for _, l := range s.Labels {
		sel, err := decide.LabelSelector(l)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "a maintenance signal ignored")
			continue
		}
		err = r.eachNode(ctx, sel, func(m *metav1.PartialObjectMetadata) bool {
			found[m.Name] = m
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	for _, n := range cached {
		if _, ok := found[n.Name]; ok || !s.MayBeInMaintenance(n.Maintenance) {
			continue
		}
		m := nodeMetadata()
		if err := r.reader.Get(ctx, client.ObjectKey{Name: n.Name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				continue // gone: nothing to undo
			}
			return nil, fmt.Errorf("reading node %s: %w", n.Name, err)
		}
		found[n.Name] = m
	}
	return found, nil
}

// announcingOthers reads, for each advertisement, nodes other than the
// candidates that announce for it (not excluded, Ready, their speaker
// ready): one more than there are candidates, or every one there is. Over
// them and the candidates, Decide tells the last node of an advertisement as
// it would over every node.
func (r *Reconciler) announcingOthers(ctx context.Context, ads []decide.Advertisement, candidates map[string]*metav1.PartialObjectMetadata,
	cached map[string]*nodecache.Node, speakers map[string]bool) ([]decide.Node, error) {
	found := map[string]decide.Node{}
	want := len(candidates) + 1
	for _, ad := range ads {
		count := 0
		for _, n := range found {
			if ad.Selects(n.Node) {
				count++
			}
		}
		selectors := ad.NodeSelectors
		if len(selectors) == 0 {
			selectors = decide.Selectors{labels.Everything()}
		}
		for _, sel := range selectors {
			if _, selectable := sel.Requirements(); !selectable || count >= want {
				continue // a selector MetalLB refuses selects nothing
			}
			err := r.eachNode(ctx, sel.Add(notExcluded), func(m *metav1.PartialObjectMetadata) bool {
				n := decide.Node{Node: nodeOf(m, cached[m.Name]), SpeakerReady: speakers[m.Name]}
				_, candidate := candidates[m.Name]
				_, seen := found[m.Name]
				if !candidate && !seen && n.SpeakerReady && status.NodeReady(n.Node) && ad.Selects(n.Node) {
					found[m.Name] = n
					count++
				}
				return count < want
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return slices.Collect(maps.Values(found)), nil
}

// notExcluded selects the nodes without MetalLB's exclusion label.
var notExcluded = func() labels.Requirement {
	req, err := labels.NewRequirement(corev1.LabelNodeExcludeBalancers, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return *req
}()

// eachNode reads the metadata of the Nodes a selector selects, a page at a
// time, until each returns false.
func (r *Reconciler) eachNode(ctx context.Context, sel labels.Selector, each func(*metav1.PartialObjectMetadata) bool) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	for {
		err := r.reader.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}, client.Limit(page), client.Continue(list.Continue))
		if err != nil {
			return fmt.Errorf("reading the Nodes' metadata (%s): %w", sel, err)
		}
		for i := range list.Items {
			if !each(&list.Items[i]) {
				return nil
			}
		}
		if list.Continue == "" {
			return nil
		}
	}
}

func nodeMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	return m
}

// nodeOf is a Node as decide reads it, from its metadata and what the cache
// keeps of it (nil: not in the cache yet, so not Ready).
func nodeOf(m *metav1.PartialObjectMetadata, cached *nodecache.Node) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.Name, UID: m.UID, Labels: m.Labels, Annotations: map[string]string{}}}
	for _, k := range []string{decide.MarkAnnotation, decide.DesiredDrainAnnotation} {
		if v, ok := m.Annotations[k]; ok {
			n.Annotations[k] = v
		}
	}
	if cached == nil {
		return n
	}
	w := cached.Maintenance
	n.Spec.Unschedulable = w.Unschedulable
	for _, k := range w.Taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: k})
	}
	if w.Ready {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	}
	return n
}

// readySpeakers are the nodes whose speaker is ready.
func (r *Reconciler) readySpeakers(ctx context.Context) (map[string]bool, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(r.namespace), client.MatchingLabels(manifests.SpeakerPods)); err != nil {
		return nil, fmt.Errorf("reading MetalLB's speakers: %w", err)
	}
	ready := map[string]bool{}
	for i := range pods.Items {
		if status.PodReady(&pods.Items[i]) {
			ready[pods.Items[i].Spec.NodeName] = true
		}
	}
	return ready, nil
}

// act labels and marks the nodes that leave, and takes the label and the
// mark off those that return, each with an Event on the node.
func (r *Reconciler) act(ctx context.Context, d decide.Decision) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(d.Leave)) {
		leave := corev1ac.Node(name).WithLabels(map[string]string{corev1.LabelNodeExcludeBalancers: ""}).
			WithAnnotations(map[string]string{decide.MarkAnnotation: d.Leave[name]})
		if err := r.client.Apply(ctx, leave, client.FieldOwner(FieldManager)); err != nil {
			errs = append(errs, fmt.Errorf("moving MetalLB's announcements off node %s: %w", name, err))
			continue
		}
		r.events.Eventf(nodeRef(name), nil, corev1.EventTypeNormal, ReasonLeft, "Maintenance",
			"MetalLB's announcements left the node: %s", d.Leave[name])
	}
	for _, name := range d.Return {
		// With neither the label nor the mark, the apply takes off both, and
		// only where no other manager set them too.
		if err := r.client.Apply(ctx, corev1ac.Node(name), client.FieldOwner(FieldManager)); err != nil {
			errs = append(errs, fmt.Errorf("bringing MetalLB's announcements back to node %s: %w", name, err))
			continue
		}
		r.events.Eventf(nodeRef(name), nil, corev1.EventTypeNormal, ReasonReturned, "Maintenance",
			"MetalLB announces from the node again")
	}
	return errors.Join(errs...)
}

// tellHeld gives a Warning Event on each node held, once for each why and
// advertisement.
func (r *Reconciler) tellHeld(held []decide.Held) {
	r.mu.Lock()
	defer r.mu.Unlock()
	told := map[string]bool{}
	for _, h := range held {
		key := h.Node + "\x00" + h.Why + "\x00" + h.Advertisement.Kind + "/" + h.Advertisement.Name
		told[key] = true
		if !r.told[key] {
			r.events.Eventf(nodeRef(h.Node), nil, corev1.EventTypeWarning, ReasonHeld, "Maintenance", "%s", h.Message())
		}
	}
	r.told = told
}

func nodeRef(name string) *corev1.Node {
	return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}
