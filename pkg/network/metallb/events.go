package metallb

import (
	"fmt"
	"unicode/utf8"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// noteLimit is the most an Event's note may hold, in bytes: the API server
// refuses a longer one, and the Event would be lost.
const noteLimit = 1024

// fitNote cuts a note to noteLimit, at a character's start, and marks the cut.
func fitNote(note string) string {
	if len(note) <= noteLimit {
		return note
	}
	cut := noteLimit - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}

// Event is an Event the module gives on an object.
type Event struct {
	Regarding    client.Object
	Type, Reason string
	Action, Note string
}

// key tells Events apart, for giving a notice once.
func (e Event) key() string {
	id := string(e.Regarding.GetUID())
	if id == "" {
		id = apply.Describe(e.Regarding)
	}
	return id + "\x00" + e.Reason + "\x00" + e.Note
}

func notice(o client.Object, reason, note string) Event {
	return Event{Regarding: o, Type: corev1.EventTypeWarning, Reason: reason, Action: "Reconcile", Note: note}
}

// platformNotices tell each configuration object, and the tuning object, why
// MetalLB is not deployed for it.
func platformNotices(s *Snapshot, p Platform, opts Options) []Event {
	note := platformMessage(p, opts.AllowedPlatforms)
	var events []Event
	for _, o := range s.Configs.inNamespace {
		events = append(events, notice(o, ReasonPlatformNotSupported, note))
	}
	if s.Tuning != nil {
		events = append(events, notice(s.Tuning, ReasonPlatformNotSupported, note))
	}
	return events
}

// foreignNotices tell each foreign object that the module leaves it alone.
func foreignNotices(foreign []apply.Foreign, blockers []conflict, namespace string) []Event {
	events := make([]Event, len(foreign))
	for i, f := range foreign {
		events[i] = notice(f.Object, ReasonForeignObjects, foreignMessage([]apply.Foreign{f}, blockers, namespace))
	}
	return events
}

// ignoredNotices tell each configuration object outside MetalLB's namespace
// that MetalLB does not read it.
func ignoredNotices(elsewhere []*metav1.PartialObjectMetadata, namespace string) []Event {
	events := make([]Event, len(elsewhere))
	for i, o := range elsewhere {
		events[i] = notice(o, ReasonIgnored, ignoredMessage(o, namespace)+": MetalLB reads its configuration only from "+namespace)
	}
	return events
}

// memberlistEvents explain a new memberlist key, should act create the
// Secret: the first one, or one that replaces a deleted key the running
// speakers still use.
func memberlistEvents(s *Snapshot, writes []*unstructured.Unstructured, namespace string) []Event {
	for _, o := range onlyKinds(writes, secretKind.Kind) {
		if o.GetName() != memberlistSecret {
			continue
		}
		if s.owned(daemonSetKind, namespace, speakerName) == nil {
			return []Event{{Regarding: o, Type: corev1.EventTypeNormal, Reason: "MemberlistKeyGenerated", Action: "Create",
				Note: "Generated the speakers' memberlist key."}}
		}
		return []Event{{Regarding: o, Type: corev1.EventTypeWarning, Reason: "MemberlistKeyRegenerated", Action: "Create",
			Note: fmt.Sprintf("The memberlist Secret was missing: generated a new key. Speakers started before now still use the old one; "+
				"restart them so that they form one cluster again: kubectl rollout restart daemonset/%s -n %s", speakerName, namespace)}}
	}
	return nil
}

// transitionEvents tell each condition that changed from what the status
// shows: on the tuning object, or else on the ClusterOperator. A condition
// the status does not show yet gets none: the status written says it.
func transitionEvents(f *findings, cs status.Conditions, clusterOperator string) []Event {
	var regarding client.Object
	recorded := map[string]status.Condition{}
	switch {
	case f.statusOnTuning():
		regarding = f.tuning
		for _, c := range f.tuning.Status.Conditions {
			recorded[c.Type] = status.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason}
		}
	case f.clusterOperator != nil:
		co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: clusterOperator, UID: f.clusterOperator.UID}}
		co.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterOperator"))
		regarding = co
		for _, c := range f.clusterOperator.Status.Conditions {
			recorded[string(c.Type)] = status.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status), Reason: c.Reason}
		}
	}
	var events []Event
	for _, c := range cs {
		old, ok := recorded[c.Type]
		if !ok || (old.Status == c.Status && old.Reason == c.Reason) {
			continue
		}
		eventType := corev1.EventTypeNormal
		if c.Bad() {
			eventType = corev1.EventTypeWarning
		}
		events = append(events, Event{Regarding: regarding, Type: eventType, Reason: c.Type + string(c.Status), Action: "Report",
			Note: c.Reason + ": " + c.Message})
	}
	return events
}

// tell gives the Events of a reconcile: the transitions, the OnCreate Events
// of objects act created, and the notices not given since the last plan
// that had them (the memory holds the last plan's notices only, so it stays
// as small as they are).
func (r *Reconciler) tell(p *Plan, transitions []Event, changes []apply.Change) {
	events := transitions
	for _, e := range p.OnCreate {
		for _, c := range changes {
			if c.Created && apply.KeyOf(c.Object) == apply.KeyOf(e.Regarding.(*unstructured.Unstructured)) {
				events = append(events, e)
			}
		}
	}
	told := make(map[string]bool, len(p.Notices))
	for _, e := range p.Notices {
		told[e.key()] = true
		if !r.told[e.key()] {
			events = append(events, e)
		}
	}
	r.told = told
	for _, e := range events {
		r.events.Eventf(e.Regarding, nil, e.Type, e.Reason, e.Action, "%s", fitNote(e.Note))
	}
}
