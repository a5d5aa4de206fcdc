package plan

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	maintenance "github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// What a plan hands act: the Plan, what its Report says, and the Events.

// Plan is everything one reconcile does, worked out from a Snapshot, and
// what it found for the Report. What it hands act is its own, or a value:
// nothing of it is the cache's.
type Plan struct {
	// Apply are the objects to write, in order: those that differ from the
	// cluster.
	Apply []*unstructured.Unstructured
	// Adopt are another installation's objects the user lets the module take
	// over: labelled as its own, and rid of owner references, before Apply.
	Adopt []objects.Ref
	// Held are rendered objects left as they are in the cluster for now.
	Held []Held
	// Withheld are rendered objects kept out of the cluster for now: removed
	// if they are there.
	Withheld []Held
	// Prune are owned objects no longer wanted, in the order to delete them.
	Prune []objects.Ref
	// Orphan are owned objects to delete leaving what they own: frr-k8s's
	// DaemonSet, whose pods then leave the nodes a batch at a time, the pods
	// of Retire (leaveNodeByNode).
	Orphan, Retire []objects.Ref
	// ConversionOff is the BGPPeer CRD whose conversion webhook is taken away
	// before Apply (see gateConversion); nil leaves it.
	ConversionOff *objects.Ref
	// ReadEveryKind asks for the snapshot again, with every rendered kind
	// read: the one planned on read the Foundation's only, and is too little
	// (needsEveryKind). Nothing else is planned.
	ReadEveryKind bool
	// WatchConfigs has the configuration kinds watched: their CRDs are served.
	WatchConfigs bool
	// Tracking is the rollout tracking to keep on the namespace; nil when it
	// is unchanged.
	Tracking *status.Tracking
	// Statuses are the status writes of the MetalLB objects that do not count.
	Statuses []StatusWrite
	// Notices are Events given once per object and note; OnCreate, Events
	// given only if act creates the object they regard.
	Notices, OnCreate []Event
	// NodeAddress is what the node-address mode serves; nil leaves it as it is.
	NodeAddress *decide.Scope
	// Maintenance is what node maintenance follows: no signal while MetalLB
	// is not deployed, so that every node it took out returns.
	Maintenance *maintenance.Scope
	// RequeueAfter is when to look again with no event: when a rollout in
	// flight would turn hung.
	RequeueAfter time.Duration

	opts Options
	// failure is why planning did not finish.
	failure error

	// What the plan found of the cluster, for its Report.
	now               time.Time
	maintenanceReport maintenance.Report
	platform          Platform
	// allowed: the platform allows MetalLB; configured: the user asked for it.
	allowed, configured bool
	metallb             *v1beta1.MetalLB
	specValid           bool  // the MetalLB object's spec was checked and is valid
	invalid             error // why it is not
	lastValid           bool  // status.appliedSpec holds a valid spec, which runs instead
	foreign             []objects.Foreign
	blockers            []problem                       // what stops taking the foreign objects over
	takeoverAsked       bool                            // the adoption annotation asks for it
	others              []problem                       // other MetalLB workloads beside the module's
	mistakes            []problem                       // in the user's configuration: told, never Degraded
	recheck             time.Duration                   // when to look again at what the mistakes read but do not watch
	foreignAPI          bool                            // the MetalLB CRD is another operator's
	managedBy           string                          // who manages MetalLB instead, when another operator does
	elsewhere           []*metav1.PartialObjectMetadata // configuration objects MetalLB ignores
	rollouts            []status.Rollout
	tracking            status.Tracking
	hung                bool
	// hungNodes name the nodes whose speaker, or whose frr-k8s, is not ready.
	hungNodes, hungFRRK8sNodes []string
	// maxUnavailable is the speakers' rollout pace, for Available.
	maxUnavailable intstr.IntOrString
	// frrK8sLeaving: frr-k8s's pods leave the nodes, frr-k8sPods run still;
	// handoverRecheck is when to look at them again (leaveNodeByNode).
	frrK8sLeaving   bool
	frrK8sPods      int
	handoverRecheck time.Duration
	clusterOperator *configv1.ClusterOperator
	// rendered are the objects the module wants in the cluster, for the
	// ClusterOperator's relatedObjects.
	rendered []*unstructured.Unstructured
}

// Held is a rendered object the plan does not write, and why.
type Held struct {
	Object *unstructured.Unstructured
	Why    string
}

// StatusWrite is a MetalLB object's next status.
type StatusWrite struct {
	Object *v1beta1.MetalLB
	Status *v1beta1.MetalLBStatus
}

// Report is what a reconcile says once act knows how its writes went: on the
// MetalLB object, the ClusterOperator and the metrics, and the Events on the
// conditions that changed.
type Report struct {
	Conditions status.Conditions
	// MetalLB is the MetalLB object's next status; nil when there is no
	// MetalLB object or its status stays as it is.
	MetalLB         *v1beta1.MetalLBStatus
	ClusterOperator status.OperandStatus
	Deployed        bool
	Rollouts        []status.Rollout
	Transitions     []Event
	// OnMetalLB tells whether the transitions compare with the MetalLB
	// object's status, rather than the ClusterOperator's.
	OnMetalLB bool
}

// Event is an Event the module gives on an object.
type Event struct {
	Regarding    objects.Object
	Type, Reason string
	Action, Note string
}

// Key tells Events apart, for giving a notice once.
func (e Event) Key() string {
	id := string(e.Regarding.GetUID())
	if id == "" {
		id = objects.Describe(e.Regarding)
	}
	return id + "\x00" + e.Reason + "\x00" + e.Note
}
