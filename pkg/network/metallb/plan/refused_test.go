package plan

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// podSecurity is how Pod Security admission refuses a speaker, as the
// DaemonSet controller's Event quotes it.
const podSecurity = `pods "speaker-x7k2p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`

var refusedCases = []planCase{
	{name: "refused: a node's speaker is refused by admission, Degraded quotes the API server, a Warning tells", cluster: with(running("A"),
		withSpec(v1beta1.MetalLBSpec{}, recorded(status.Degraded, metav1.ConditionFalse, status.ReasonAsExpected)),
		speakersMissing(1), created(uidSpeaker, false, "Error creating: "+podSecurity, -5*time.Second)),
		want: planned{version: "A", requeue: 10 * time.Minute, statuses: []string{"metallb-system/metallb"}, conditions: []string{
			`Degraded True PodsRefused: The API server refuses MetalLB's pods: the DaemonSet speaker cannot create its pods: ` + podSecurity +
				`. Fix what refuses them (an admission webhook or policy, Pod Security, a ResourceQuota in metallb-system, or on OpenShift ` +
				`a SecurityContextConstraints grant): their controllers retry on their own. Their Events: kubectl get events -n metallb-system --field-selector reason=FailedCreate`},
			events: []string{"Warning DegradedTrue MetalLB/metallb: PodsRefused: The API server refuses MetalLB's pods: the DaemonSet speaker cannot create its pods: " + podSecurity}}},
	{name: "refused, then a pod created: no longer degraded", cluster: with(running("A"), speakersMissing(1),
		created(uidSpeaker, false, "Error creating: "+podSecurity, -5*time.Second), created(uidSpeaker, true, "Created pod: speaker-abcde", -2*time.Second)),
		want: planned{version: "A", requeue: 10 * time.Minute, conditions: []string{"Degraded False AsExpected"}}},
	{name: "refused, and every node has its speaker again: no longer degraded", cluster: with(running("A"),
		created(uidSpeaker, false, "Error creating: "+podSecurity, -5*time.Second)),
		want: planned{version: "A", conditions: []string{"Degraded False AsExpected"}}},
	{name: "refused in the second a pod was created, a node still without: degraded", cluster: with(running("A"), speakersMissing(1),
		created(uidSpeaker, true, "Created pod: speaker-abcde", -2*time.Second), created(uidSpeaker, false, "Error creating: "+podSecurity, -2*time.Second)),
		want: planned{version: "A", requeue: 10 * time.Minute, conditions: []string{"Degraded True PodsRefused: the DaemonSet speaker cannot create its pods"}}},
	{name: "refusals of an earlier speaker DaemonSet of the same name do not count", cluster: with(running("A"), speakersMissing(1),
		created("uid-an-earlier-speaker", false, "Error creating: "+podSecurity, -5*time.Second)),
		want: planned{version: "A", requeue: 10 * time.Minute, conditions: []string{"Degraded False AsExpected"}}},
	{name: "refused: the controller's ReplicaSet cannot create its pod (the Deployment's ReplicaFailure)", cluster: with(running("A"),
		replicaFailure(manifests.ControllerName, `pods "controller-5d8f7-abcde" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=4, limited: pods=4`)),
		want: planned{version: "A", conditions: []string{
			`Degraded True PodsRefused: The API server refuses MetalLB's pods: the Deployment controller cannot create its pods: pods "controller-5d8f7-abcde" is forbidden: exceeded quota: pods`}}},
}

// uidSpeaker is the speaker DaemonSet's UID in running.
const uidSpeaker = types.UID("uid-" + manifests.SpeakerName)

// speakersMissing has n of the speaker DaemonSet's nodes without a pod.
func speakersMissing(n int64) func(*Snapshot) {
	return func(s *Snapshot) {
		ds := s.live(objects.DaemonSet, manifests.SpeakerName)
		desired, _, _ := unstructured.NestedInt64(ds.Object, "status", "desiredNumberScheduled")
		rolledOut(ds, desired, desired-n, desired-n)
		ds.Object["status"].(map[string]any)["currentNumberScheduled"] = desired - n
	}
}

// created adds a DaemonSet controller's Event, ago before now.
func created(daemonSet types.UID, succeeded bool, message string, ago time.Duration) func(*Snapshot) {
	return func(s *Snapshot) {
		s.PodCreations = append(s.PodCreations, PodCreation{DaemonSet: daemonSet, Failed: !succeeded, Message: message, At: now.Add(ago)})
	}
}

// replicaFailure gives a Deployment the condition its controller sets when
// its ReplicaSet cannot create a pod.
func replicaFailure(name, message string) func(*Snapshot) {
	return func(s *Snapshot) {
		d := s.live(objects.Deployment, name)
		d.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{
			"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message}}
	}
}

// The DaemonSet's refusal is the last FailedCreate, when nodes lack a pod and
// none was created since.
func TestRefusedCreate(t *testing.T) {
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	mine, other := types.UID("ds"), types.UID("earlier-ds")
	for _, tc := range []struct {
		name      string
		creations []PodCreation
		missing   int64
		want      string
	}{
		{"none", nil, 1, ""},
		{"refused", []PodCreation{{mine, true, "Error creating: no", at(0)}}, 1, "no"},
		{"the last refusal is quoted", []PodCreation{{mine, true, "first", at(-9)}, {mine, true, "last", at(-1)}, {mine, true, "middle", at(-5)}}, 1, "last"},
		{"created since", []PodCreation{{mine, true, "no", at(-3)}, {mine, false, "Created pod: p", at(-1)}}, 1, ""},
		{"refused since", []PodCreation{{mine, false, "Created pod: p", at(-3)}, {mine, true, "no", at(-1)}}, 1, "no"},
		{"in the same second", []PodCreation{{mine, false, "Created pod: p", at(0)}, {mine, true, "no", at(0)}}, 1, "no"},
		{"nothing missing", []PodCreation{{mine, true, "no", at(0)}}, 0, ""},
		{"another DaemonSet's", []PodCreation{{other, true, "no", at(0)}}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusedCreate(tc.creations, mine, tc.missing); got != tc.want {
				t.Errorf("refusedCreate = %q, want %q", got, tc.want)
			}
		})
	}
}

// A workload refused leaves the others out of the message.
func TestRefusedMessageNamesOnlyTheRefused(t *testing.T) {
	msg := refusedMessage([]status.Rollout{{Kind: "Deployment", Name: "controller"}, {Kind: "DaemonSet", Name: "speaker", Refused: "no."}}, "ns")
	if want := "The API server refuses MetalLB's pods: the DaemonSet speaker cannot create its pods: no. Fix"; !strings.HasPrefix(msg, want) {
		t.Errorf("message %q does not start %q", msg, want)
	}
	if refusedMessage([]status.Rollout{{Kind: "Deployment", Name: "controller"}}, "ns") != "" {
		t.Error("a message with nothing refused")
	}
}

// The Events are read only when a DaemonSet lacks a pod somewhere.
func TestPodsMissing(t *testing.T) {
	opts := planOptions()
	for _, tc := range []struct {
		name    string
		cluster func(*testing.T, Options) *Snapshot
		want    bool
	}{
		{"rolled out", running("A"), false},
		{"a node without its speaker", with(running("A"), speakersMissing(1)), true},
		{"nothing deployed", empty, false},
	} {
		if got := PodsMissing(tc.cluster(t, opts)); got != tc.want {
			t.Errorf("%s: PodsMissing = %t, want %t", tc.name, got, tc.want)
		}
	}
}
