package plan

import (
	"fmt"
	"unicode/utf8"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// noteLimit is the most an Event's note may hold, in bytes: the API server
// refuses a longer one, and the Event would be lost.
const noteLimit = 1024

// FitNote cuts a note to noteLimit, at a character's start, and marks the cut.
func FitNote(note string) string {
	if len(note) <= noteLimit {
		return note
	}
	cut := noteLimit - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}

func notice(o objects.Object, reason, note string) Event {
	return Event{Regarding: o, Type: corev1.EventTypeWarning, Reason: reason, Action: "Reconcile", Note: note}
}

// platformNotices tell each configuration object, and the MetalLB object, why
// MetalLB is not deployed for it.
func platformNotices(s *Snapshot, p Platform, opts Options) []Event {
	note := platformMessage(p, opts.AllowedPlatforms)
	var events []Event
	for _, o := range s.Configs.InNamespace {
		events = append(events, notice(o, ReasonPlatformNotSupported, note))
	}
	if s.MetalLB != nil {
		events = append(events, notice(s.MetalLB, ReasonPlatformNotSupported, note))
	}
	return events
}

// foreignNotices tell each foreign object that the module leaves it alone.
func foreignNotices(foreign []objects.Foreign, blockers []problem, namespace string) []Event {
	events := make([]Event, len(foreign))
	for i, f := range foreign {
		events[i] = notice(f.Object, ReasonForeignObjects, foreignMessage([]objects.Foreign{f}, blockers, namespace))
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
	for _, o := range onlyKinds(writes, objects.Secret.Kind) {
		if o.GetName() != manifests.MemberlistSecret {
			continue
		}
		if s.OwnedObject(objects.DaemonSet, namespace, manifests.SpeakerName) == nil {
			return []Event{{Regarding: o, Type: corev1.EventTypeNormal, Reason: "MemberlistKeyGenerated", Action: "Create",
				Note: "Generated the speakers' memberlist key."}}
		}
		return []Event{{Regarding: o, Type: corev1.EventTypeWarning, Reason: "MemberlistKeyRegenerated", Action: "Create",
			Note: fmt.Sprintf("The memberlist Secret was missing: generated a new key. Speakers started before now still use the old one; "+
				"restart them so that they form one cluster again: kubectl rollout restart daemonset/%s -n %s", manifests.SpeakerName, namespace)}}
	}
	return nil
}

// transitionEvents tell each condition that changed from what the status
// shows: on the MetalLB object, or else on the ClusterOperator. A condition
// the status does not show yet gets none: the status written says it.
func (p *Plan) transitionEvents(cs status.Conditions) []Event {
	regarding, recorded := p.recordedConditions()
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

// recordedConditions are the conditions the status shows, and the object
// that shows them: the MetalLB object, or else the ClusterOperator.
func (p *Plan) recordedConditions() (objects.Object, map[string]status.Condition) {
	recorded := map[string]status.Condition{}
	switch {
	case p.statusOnMetalLB():
		for _, c := range p.metallb.Status.Conditions {
			recorded[c.Type] = status.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason}
		}
		return p.metallb, recorded
	case p.clusterOperator != nil:
		co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: p.opts.ClusterOperator, UID: p.clusterOperator.UID}}
		co.SetGroupVersionKind(objects.ClusterOperator)
		for _, c := range p.clusterOperator.Status.Conditions {
			recorded[string(c.Type)] = status.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status), Reason: c.Reason}
		}
		return co, recorded
	}
	return nil, recorded
}

func ignoredMessage(o *metav1.PartialObjectMetadata, namespace string) string {
	return fmt.Sprintf("%s %s/%s is outside %s and is ignored", o.Kind, o.Namespace, o.Name, namespace)
}
