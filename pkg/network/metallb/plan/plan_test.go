package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// now is the time every plan of the table is made at.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// planCase is one decision: a cluster, the options, and what the plan must be.
type planCase struct {
	name    string
	opts    func(*Options)
	cluster func(t *testing.T, opts Options) *Snapshot
	// actErr is how act's writes went, for the report.
	actErr error
	want   planned
}

// planned is what a plan is checked for. Objects are "Kind/name"; held and
// withheld ones "Kind/name: part of why"; conditions "Type Status Reason:
// part of the message", for the types listed; Events "Type Reason Kind/name:
// part of the note", all of them.
type planned struct {
	apply, held, withheld, prune []string
	adopt                        []string
	// orphaned are deleted leaving what they own; retired, pods deleted.
	orphaned, retired []string
	conditions        []string
	events            []string
	version           string
	requeue           time.Duration
	// statuses are the MetalLB objects whose status is written: "namespace/name".
	statuses []string
}

// Every decision of the module is a row: the plan for a snapshot of the
// cluster, without a cluster.
func TestPlan(t *testing.T) {
	for _, tc := range slices.Concat(planCases, backendCases, platformFRRCases, monitoringCases, refusedCases) {
		t.Run(tc.name, func(t *testing.T) {
			opts := planOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			p := Make(tc.cluster(t, opts), opts, now)
			checkPlan(t, p, p.Report(tc.actErr), tc.want)
		})
	}
}

func planOptions() Options {
	return Options{
		Environment:      manifests.Environment{Namespace: manifests.DefaultNamespace, Images: imagesOf("A"), Webhooks: true},
		AllowedPlatforms: DefaultAllowedPlatforms,
		HungAfter:        10 * time.Minute,
		ClusterOperator:  "metallb",
	}
}

func imagesOf(release string) manifests.Images {
	return manifests.Images{Controller: "quay.io/metallb/controller:" + release, Speaker: "quay.io/metallb/speaker:" + release,
		FRRK8s: "quay.io/metallb/frr-k8s:" + release, FRR: "quay.io/frrouting/frr:" + release, ReleaseVersion: release}
}

func checkPlan(t *testing.T, p *Plan, r Report, want planned) {
	t.Helper()
	checkList(t, "applied", names(p.Apply), want.apply)
	checkList(t, "pruned", refNames(p.Prune), want.prune)
	checkList(t, "adopted", refNames(p.Adopt), want.adopt)
	checkList(t, "orphaned", refNames(p.Orphan), want.orphaned)
	checkList(t, "retired", refNames(p.Retire), want.retired)
	checkList(t, "held", heldOf(p.Held), want.held)
	checkList(t, "withheld", heldOf(p.Withheld), want.withheld)
	checkList(t, "Events", eventsOf(p, r), want.events)
	checkList(t, "statuses written", statusesOf(p, r), want.statuses)
	for _, w := range want.conditions {
		typ, _, _ := strings.Cut(w, " ")
		c := r.Conditions.Get(typ)
		if got := fmt.Sprintf("%s %s %s: %s", c.Type, c.Status, c.Reason, c.Message); !matches(got, w) {
			t.Errorf("condition\n got  %s\n want %s", got, w)
		}
	}
	if v := p.tracking.Version; v != want.version {
		t.Errorf("version reported %q, want %q", v, want.version)
	}
	if p.RequeueAfter != want.requeue {
		t.Errorf("requeue after %s, want %s", p.RequeueAfter, want.requeue)
	}
}

// matches tells whether got, "head: rest", has w's head and a rest that
// contains w's.
func matches(got, w string) bool {
	gh, gm, _ := strings.Cut(got, ": ")
	wh, wm, _ := strings.Cut(w, ": ")
	return gh == wh && strings.Contains(gm, wm)
}

// checkList compares a list with its wanted items: each item of want is an
// exact item of got, or a prefix of one up to a colon and part of its rest.
func checkList(t *testing.T, what string, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = got[i] == want[i] || matches(got[i], want[i])
	}
	if !ok {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func refNames(refs []objects.Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return out
}

func heldOf(held []Held) []string {
	var out []string
	for _, h := range held {
		out = append(out, h.Object.GetKind()+"/"+h.Object.GetName()+": "+h.Why)
	}
	return out
}

// eventsOf lists every Event the reconcile may give: notices, those given if
// an object is created, and the transitions.
func eventsOf(p *Plan, r Report) []string {
	var out []string
	for _, list := range [][]Event{p.Notices, p.OnCreate, r.Transitions} {
		for _, e := range list {
			kind := e.Regarding.GetObjectKind().GroupVersionKind().Kind
			out = append(out, fmt.Sprintf("%s %s %s/%s: %s", e.Type, e.Reason, kind, e.Regarding.GetName(), e.Note))
		}
	}
	return out
}

func statusesOf(p *Plan, r Report) []string {
	var out []string
	for _, w := range p.Statuses {
		out = append(out, w.Object.Namespace+"/"+w.Object.Name)
	}
	if r.MetalLB != nil {
		out = append(out, manifests.DefaultNamespace+"/"+manifests.ObjectName)
	}
	return out
}

// empty is a cluster with no MetalLB: nodes with no provider (platform None).
func empty(*testing.T, Options) *Snapshot {
	return &Snapshot{Kinds: mustInventory(planOptions()).Kinds, Owned: map[objects.Key]*unstructured.Unstructured{},
		PriorityClasses: sets.New[string](), RuntimeClasses: sets.New[string](), MemberlistKey: "a2V5",
		Configs: Configs{Served: true}}
}

func mustInventory(opts Options) manifests.Inventory {
	inv, err := manifests.InventoryOf(opts.Environment)
	if err != nil {
		panic(err)
	}
	return inv
}

// running is a cluster where the module deployed release, for a pool, and
// the rollout finished on three nodes.
func running(release string) func(*testing.T, Options) *Snapshot {
	return runningWith(release, v1beta1.MetalLBSpec{})
}

// runningWith is running, for a MetalLB object's spec.
func runningWith(release string, spec v1beta1.MetalLBSpec) func(*testing.T, Options) *Snapshot {
	return func(t *testing.T, opts Options) *Snapshot {
		s := empty(t, opts)
		opts.Images = imagesOf(release)
		settings, err := manifests.SettingsFor(opts.Environment, metallbObject(spec))
		if err != nil {
			panic(err)
		}
		objs, err := manifests.Render(settings, "a2V5")
		if err != nil {
			panic(err)
		}
		for _, o := range objs {
			live := objects.Applied(o).DeepCopy()
			live.SetUID(types.UID("uid-" + o.GetName()))
			rolledOut(live, 3, 3, 3)
			s.Owned[objects.KeyOf(live)] = live
		}
		s.MemberlistKey = ""
		s.Tracking = status.Tracking{Version: release}
		pool(s)
		return s
	}
}

// rolledOut gives a workload the status of a rollout: of desired pods (nodes
// of a DaemonSet, at most one for the Deployment), updated run the current
// template and available are available.
func rolledOut(o *unstructured.Unstructured, desired, updated, available int64) {
	o.SetGeneration(1)
	switch o.GetKind() {
	case objects.DaemonSet.Kind:
		o.Object["status"] = map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": desired,
			"currentNumberScheduled": desired, "updatedNumberScheduled": updated, "numberAvailable": available}
	case objects.Deployment.Kind:
		o.Object["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(1),
			"updatedReplicas": min(updated, 1), "availableReplicas": min(available, 1)}
	}
}

func configObject(kind, namespace, name string) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)}}
	o.SetGroupVersionKind(manifests.IPAddressPoolKind.GroupVersion().WithKind(kind))
	return o
}

// with changes a cluster.
func with(cluster func(*testing.T, Options) *Snapshot, changes ...func(*Snapshot)) func(*testing.T, Options) *Snapshot {
	return func(t *testing.T, opts Options) *Snapshot {
		s := cluster(t, opts)
		for _, change := range changes {
			change(s)
		}
		return s
	}
}

func (s *Snapshot) live(gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	namespace := manifests.DefaultNamespace
	if gvk == objects.Namespace || gvk == objects.CustomResourceDefinition || gvk == objects.ValidatingWebhookConfiguration {
		namespace = ""
	}
	return s.OwnedObject(gvk, namespace, name)
}

func metallbObject(spec v1beta1.MetalLBSpec, conditions ...metav1.Condition) *v1beta1.MetalLB {
	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName, Generation: 1, UID: "uid-metallb"}, Spec: spec}
	obj.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("MetalLB"))
	obj.Status.Conditions = conditions
	return obj
}

func recorded(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}
}

// adoptedSpeaker has the speaker DaemonSet as adoption leaves it: owned, and
// as another installation wrote it, with no release annotation.
func adoptedSpeaker(s *Snapshot) {
	speaker := s.OwnedObject(objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName)
	annotations := speaker.GetAnnotations()
	delete(annotations, manifests.ReleaseVersionAnnotation)
	speaker.SetAnnotations(annotations)
}

func awsNodes(s *Snapshot) {
	s.Platform.Nodes = []NodeProvider{{Name: "n0", ProviderID: "aws:///us-east-1a/i-0"}}
}

func pod(node string, ready bool) corev1.Pod {
	s := corev1.ConditionFalse
	if ready {
		s = corev1.ConditionTrue
	}
	return corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: s}}}}
}

func rawSpec(spec string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(spec)} }

var errApply = errors.New(`applying DaemonSet metallb-system/speaker: the server is currently unable to handle the request`)
