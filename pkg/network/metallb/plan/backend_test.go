package plan

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// frrK8sSpec chooses the frr-k8s BGP backend.
var frrK8sSpec = v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s}

// What the frr-k8s backend adds, by part, in apply order.
var (
	frrK8sCRDs = []string{"CustomResourceDefinition/bgpsessionstates.frrk8s.metallb.io",
		"CustomResourceDefinition/frrconfigurations.frrk8s.metallb.io", "CustomResourceDefinition/frrk8sconfigurations.frrk8s.metallb.io",
		"CustomResourceDefinition/frrnodestates.frrk8s.metallb.io"}
	// frrK8sParts are frr-k8s's objects but its CRDs, its DaemonSet and webhook.
	frrK8sParts = []string{"ServiceAccount/frr-k8s-daemon", "Role/frr-k8s-daemon-role", "Role/frr-k8s-nodestate-cleaner-role",
		"ClusterRole/frr-k8s-daemon-role", "ClusterRole/frr-k8s-metrics-reader", "ClusterRole/frr-k8s-proxy-role",
		"RoleBinding/frr-k8s-daemon-rolebinding", "RoleBinding/frr-k8s-nodestate-cleaner-rolebinding",
		"ClusterRoleBinding/frr-k8s-daemon-rolebinding", "ClusterRoleBinding/frr-k8s-proxy-rolebinding",
		"ConfigMap/frr-k8s-frr-startup", "Secret/frr-k8s-webhook-server-cert",
		"Service/frr-k8s-webhook-service", "Deployment/frr-k8s-statuscleaner"}
	frrK8sDaemon  = "DaemonSet/frr-k8s-daemon"
	frrK8sWebhook = "ValidatingWebhookConfiguration/frr-k8s-validating-webhook-configuration"
	// usesFRRK8s are MetalLB's objects that differ with the frr-k8s backend.
	usesFRRK8s = []string{"ClusterRole/metallb-system:speaker", "Deployment/controller"}
	// frrK8sPruned is what going back to native prunes once the speakers run
	// without frr-k8s: all of frr-k8s's objects but its CRDs, dependents first.
	frrK8sPruned = []string{frrK8sWebhook, frrK8sDaemon, "Deployment/frr-k8s-statuscleaner",
		"Service/frr-k8s-webhook-service", "Secret/frr-k8s-webhook-server-cert", "ConfigMap/frr-k8s-frr-startup",
		"ClusterRoleBinding/frr-k8s-daemon-rolebinding", "ClusterRoleBinding/frr-k8s-proxy-rolebinding",
		"RoleBinding/frr-k8s-daemon-rolebinding", "RoleBinding/frr-k8s-nodestate-cleaner-rolebinding",
		"ClusterRole/frr-k8s-daemon-role", "ClusterRole/frr-k8s-metrics-reader", "ClusterRole/frr-k8s-proxy-role",
		"Role/frr-k8s-daemon-role", "Role/frr-k8s-nodestate-cleaner-role", "ServiceAccount/frr-k8s-daemon"}
)

// backendCases are the decisions of choosing, switching and upgrading the BGP
// backend: frr-k8s rolls out before the speakers that announce through it,
// and goes only after them.
var backendCases = []planCase{
	{name: "frr-k8s chosen on a running cluster: frr-k8s first, the speakers wait for it, its webhook for its server",
		cluster: with(running("A"), withSpec(frrK8sSpec)),
		want: planned{apply: cat(frrK8sCRDs, frrK8sParts[:10], usesFRRK8s[:1], frrK8sParts[10:13], usesFRRK8s[1:], frrK8sParts[13:], []string{frrK8sDaemon}),
			held:     []string{"DaemonSet/speaker: frr-k8s has not finished rolling out A on every node: the speakers, which announce through it, follow it"},
			withheld: []string{frrK8sWebhook + ": Deployment frr-k8s-statuscleaner, which serves the webhooks, is not available yet"},
			version:  "A", statuses: []string{"metallb-system/metallb"}, requeue: 10 * time.Minute,
			conditions: []string{"Available False Deploying", "Progressing True RollingOut: Rolling out A: controller: 1 of 1 replicas updated, " +
				"frr-k8s-statuscleaner: the Deployment is being created, frr-k8s-daemon: the DaemonSet is being created, speaker: 3 of 3 nodes updated"}}},
	{name: "frr-k8s rolling out: the speakers still wait, a node down as maxUnavailable allows",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), rolledToWith("A", v1beta1.MetalLBSpec{}, manifests.SpeakerName), frrK8sAt(3, 2, 2)),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, requeue: 10 * time.Minute,
			held:       []string{"DaemonSet/speaker: frr-k8s has not finished rolling out A"},
			conditions: []string{"Available True AsExpected", "Progressing True RollingOut: frr-k8s-daemon: 2 of 3 nodes updated, 1 unavailable, speaker: 3 of 3"}}},
	{name: "frr-k8s down on more nodes than maxUnavailable: not available",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), frrK8sAt(3, 3, 1)),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, requeue: 10 * time.Minute,
			conditions: []string{"Available False FRRK8sUnavailable: frr-k8s is missing on some nodes, whose speakers cannot announce by BGP. frr-k8s-daemon: 3 of 3 nodes updated, 2 unavailable"}}},
	{name: "frr-k8s down on a node, nothing to write: nothing held, the speakers running",
		cluster: settled(with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), frrK8sAt(3, 3, 2))),
		want:    planned{version: "A", requeue: 9 * time.Minute, conditions: []string{"Progressing True RollingOut: frr-k8s-daemon: 3 of 3 nodes updated, 1 unavailable"}}},
	{name: "frr-k8s ready on every node: the speakers follow",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), rolledToWith("A", v1beta1.MetalLBSpec{}, manifests.SpeakerName)),
		want:    planned{apply: []string{"DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}}},
	{name: "frr-k8s chosen, the speakers moved onto it on every node: their pace goes",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), paced(3, 3, 3)),
		want:    planned{apply: []string{"DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}}},
	{name: "back to native: the speakers first, frr-k8s kept while they may announce through it",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{})),
		want: planned{apply: cat(usesFRRK8s, []string{"DaemonSet/speaker"}), version: "A", statuses: []string{"metallb-system/metallb"},
			held: heldUntilNative()}},
	{name: "back to native, the speakers run without frr-k8s: its DaemonSet goes leaving its pods, the rest stays until they have left",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative),
		want: planned{orphaned: []string{frrK8sDaemon}, held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"},
			conditions: []string{"Progressing True RollingOut: frr-k8s leaves the nodes 1 at a time, each handing its BGP sessions over"}}},
	{name: "back to native, frr-k8s's DaemonSet going, its pods not yet left by it: nothing more",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGoing, frrK8sPods(true, "node-0", "node-1", "node-2")),
		want: planned{held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"},
			conditions: []string{"Progressing True RollingOut: frr-k8s leaves the nodes 1 at a time, each handing its BGP sessions over: its pods run on 3 nodes still"}}},
	{name: "back to native, frr-k8s's pods left on 3 nodes: the first node's goes, the next once the handover has passed",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGone, frrK8sPods(false, "node-2", "node-0", "node-1")),
		want:    planned{retired: []string{"Pod/frr-k8s-node-0"}, held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"}, requeue: FRRK8sHandover}},
	{name: "back to native, frr-k8s's pods left on 3 nodes, maxUnavailable 2: two nodes at a time",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(twoAtATime), rolledToWith("A", twoAtATime, cat(usesFRRK8s, []string{manifests.SpeakerName})...), frrK8sDaemonGone, frrK8sPods(false, "node-0", "node-1", "node-2")),
		want:    planned{retired: []string{"Pod/frr-k8s-node-0", "Pod/frr-k8s-node-1"}, held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"}, requeue: FRRK8sHandover}},
	{name: "back to native, the last batch deleted a second ago: the next waits for the handover",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGone, frrK8sPods(false, "node-1", "node-2"),
			func(s *Snapshot) { s.FRRK8sLeftAt = now.Add(-time.Second) }),
		want: planned{held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"}, requeue: FRRK8sHandover - time.Second}},
	{name: "back to native, a pod of the last batch still stopping: the next waits for it",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGone, frrK8sPods(false, "node-0", "node-1", "node-2"),
			func(s *Snapshot) { s.FRRK8sPods[0].DeletionTimestamp = new(metav1.NewTime(now)) }),
		want: planned{held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"}, requeue: terminatingRecheck}},
	{name: "back to native, a pod of frr-k8s's labels made by hand, no DaemonSet's: left alone",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGone, frrK8sPods(false, "node-0"),
			func(s *Snapshot) { s.FRRK8sPods[0].Labels = nil }),
		want: planned{prune: slices.DeleteFunc(slices.Clone(frrK8sPruned), func(n string) bool { return n == frrK8sDaemon }), version: "A", statuses: []string{"metallb-system/metallb"}}},
	{name: "back to native, frr-k8s's pods gone from every node: the rest of frr-k8s goes, its CRDs stay",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{}), rolledToNative, frrK8sDaemonGone),
		want:    planned{prune: slices.DeleteFunc(slices.Clone(frrK8sPruned), func(n string) bool { return n == frrK8sDaemon }), version: "A", statuses: []string{"metallb-system/metallb"}}},
	{name: "frr-k8s chosen again while its pods leave: none deleted, its DaemonSet back to take them",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), frrK8sDaemonGone, frrK8sPods(false, "node-0", "node-1")),
		want:    planned{apply: []string{frrK8sDaemon}, version: "A", statuses: []string{"metallb-system/metallb"}, requeue: 10 * time.Minute}},
	{name: "MetalLB deactivated while frr-k8s's pods leave: every one left goes at once, then frr-k8s's other objects",
		cluster: with(runningWith("A", v1beta1.MetalLBSpec{}), unconfigured, withFRRK8sLeft, frrK8sPods(false, "node-0", "node-1")),
		want:    planned{apply: []string{"CustomResourceDefinition/" + manifests.BGPPeersCRD}, version: "A", prune: deactivated, retired: []string{"Pod/frr-k8s-node-0", "Pod/frr-k8s-node-1"}, held: heldUntilLeftWithout(frrK8sDaemon), requeue: FRRK8sHandover}},
	{name: "upgrade with frr-k8s, the controller not rolled out: frr-k8s and the speakers wait", opts: releaseB,
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec)),
		want: planned{apply: []string{"Deployment/controller", "Deployment/frr-k8s-statuscleaner"}, version: "A", statuses: []string{"metallb-system/metallb"},
			held: []string{frrK8sDaemon + ": the controller has not finished rolling out B: frr-k8s and the speakers follow it",
				"DaemonSet/speaker: the controller has not finished rolling out B"}, requeue: 10 * time.Minute}},
	{name: "upgrade with frr-k8s, the controller rolled out: frr-k8s next, the speakers still wait", opts: releaseB,
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), rolledToWith("B", frrK8sSpec, manifests.ControllerName, manifests.FRRK8sStatusCleaner), upgrading),
		want: planned{apply: []string{frrK8sDaemon}, version: "A", statuses: []string{"metallb-system/metallb"},
			held: []string{"DaemonSet/speaker: frr-k8s has not finished rolling out B"}, requeue: 10 * time.Minute}},
	{name: "upgrade with frr-k8s, frr-k8s rolled out: the speakers follow", opts: releaseB,
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), rolledToWith("B", frrK8sSpec, manifests.ControllerName, manifests.FRRK8sStatusCleaner, manifests.FRRK8sName), upgrading),
		want:    planned{apply: []string{"DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}, requeue: 10 * time.Minute}},
	{name: "upgrade with frr-k8s hung on a node: the node named", opts: releaseB,
		cluster: stalled(with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), upgrading,
			rolledToWith("B", frrK8sSpec, manifests.ControllerName, manifests.FRRK8sStatusCleaner, manifests.FRRK8sName), frrK8sAt(3, 2, 2), func(s *Snapshot) {
				s.SpeakerPods = []corev1.Pod{pod("node-0", true), pod("node-1", true), pod("node-2", true)}
				s.FRRK8sPods = []corev1.Pod{pod("node-0", true), pod("node-1", true), pod("node-2", false)}
			})),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, held: []string{"DaemonSet/speaker: frr-k8s has not finished rolling out B"},
			conditions: []string{"Degraded True RolloutHung: (Rolling out B: controller: 1 of 1 replicas updated, frr-k8s-statuscleaner: 1 of 1 replicas updated, " +
				"frr-k8s-daemon: 2 of 3 nodes updated, 1 unavailable, speaker: not started); frr-k8s is not ready on nodes: node-2. Look at their pods"}}},
}

// platformFRRCases are the decisions of the frr-k8s backend where OpenShift's
// network operator may run frr-k8s: the speakers use the platform's, and the
// module never deploys a second.
var platformFRRCases = []planCase{
	{name: "OpenShift's frr-k8s on, frr-k8s chosen: none deployed, the speakers use the platform's",
		cluster: with(running("A"), withSpec(frrK8sSpec), platformFRR(true)),
		want:    planned{apply: []string{"ClusterRole/metallb-system:speaker", "Deployment/controller", "DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}}},
	{name: "OpenShift's frr-k8s off, frr-k8s chosen: refused with what to do, what runs left as it is",
		cluster: with(runningWith("A", v1beta1.MetalLBSpec{}), withSpec(frrK8sSpec), applied(`{}`), platformFRR(false)),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, conditions: []string{`Degraded True InvalidConfiguration: spec.bgpBackend: Invalid value: "frr-k8s": ` +
			"on OpenShift MetalLB uses the cluster network operator's frr-k8s, which is off: add FRR to the Network object's spec.additionalRoutingCapabilities.providers (" +
			manifests.EnableFRRCommand + "), or use bgpBackend native"}}},
	{name: "the module's frr-k8s running, OpenShift's turned on: the speakers move to the platform's first, then the module's goes",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), platformFRR(true)),
		want:    planned{apply: []string{"DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}, held: heldUntilNative()}},
	{name: "the speakers use OpenShift's frr-k8s: the module's DaemonSet goes leaving its pods to leave node by node, its CRDs stay",
		cluster: with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), platformFRR(true), rolledToWith("A", frrK8sSpec, manifests.SpeakerName)),
		want: planned{orphaned: []string{frrK8sDaemon}, held: heldUntilLeft(), version: "A", statuses: []string{"metallb-system/metallb"},
			conditions: []string{"Progressing True RollingOut: frr-k8s leaves the nodes 1 at a time"}}},
}

// platformFRR has OpenShift's network operator API exist, with FRR enabled
// or not.
func platformFRR(enabled bool) func(*Snapshot) {
	return func(s *Snapshot) {
		s.PlatformFRRK8s = &manifests.PlatformFRRK8s{Namespace: manifests.OpenShiftFRRK8sNamespace, Enabled: enabled}
	}
}

// heldUntilNative is what going back to native keeps while the speakers roll
// out without frr-k8s.
func heldUntilNative() []string {
	var out []string
	for _, o := range frrK8sPruned {
		out = append(out, o+": the speakers have not finished rolling out without this frr-k8s: it goes once they have")
	}
	return out
}

// heldUntilLeft is what frr-k8s's pods leaving the nodes keep: its objects
// but its DaemonSet and CRDs.
func heldUntilLeft() []string { return heldUntilLeftWithout(frrK8sDaemon) }

func heldUntilLeftWithout(gone string) []string {
	var out []string
	for _, o := range frrK8sPruned {
		if o != gone {
			out = append(out, o+": frr-k8s's pods have not left every node yet: it goes once they have")
		}
	}
	return out
}

// twoAtATime has the speakers roll out two nodes at a time.
var twoAtATime = v1beta1.MetalLBSpec{SpeakerConfig: &v1beta1.SpeakerConfig{MaxUnavailable: new(intstr.FromInt32(2))}}

// rolledToNative has the speakers and what changes with them rolled out
// without frr-k8s.
var rolledToNative = rolledToWith("A", v1beta1.MetalLBSpec{}, cat(usesFRRK8s, []string{manifests.SpeakerName})...)

// frrK8sDaemonGoing has frr-k8s's DaemonSet deleted, the garbage collector
// not yet done with it; frrK8sDaemonGone, gone.
func frrK8sDaemonGoing(s *Snapshot) {
	s.live(objects.DaemonSet, manifests.FRRK8sName).SetDeletionTimestamp(new(metav1.NewTime(now)))
}

func frrK8sDaemonGone(s *Snapshot) {
	delete(s.Owned, objects.KeyOf(s.live(objects.DaemonSet, manifests.FRRK8sName)))
}

// withFRRK8sLeft adds frr-k8s's objects, its DaemonSet gone, to a snapshot
// without them.
func withFRRK8sLeft(s *Snapshot) {
	rolledToWith("A", frrK8sSpec, frrK8sPruned...)(s)
	frrK8sDaemonGone(s)
}

// frrK8sPods gives frr-k8s's pods on the nodes, owned by its DaemonSet or
// left by it.
func frrK8sPods(owned bool, nodes ...string) func(*Snapshot) {
	return func(s *Snapshot) {
		for _, node := range nodes {
			p := pod(node, true)
			p.Namespace, p.Name, p.UID = manifests.DefaultNamespace, "frr-k8s-"+node, types.UID("uid-frr-k8s-"+node)
			p.Labels = map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: "5d8f"}
			if owned {
				p.OwnerReferences = []metav1.OwnerReference{{Kind: objects.DaemonSet.Kind, Name: manifests.FRRK8sName, Controller: new(true)}}
			}
			s.FRRK8sPods = append(s.FRRK8sPods, p)
		}
	}
}

// frrK8sAt gives frr-k8s's DaemonSet a rollout of desired nodes.
func frrK8sAt(desired, updated, available int64) func(*Snapshot) {
	return func(s *Snapshot) {
		rolledOut(s.live(objects.DaemonSet, manifests.FRRK8sName), desired, updated, available)
	}
}

// stalled is cluster with no progress for eleven minutes.
func stalled(cluster func(*testing.T, Options) *Snapshot) func(*testing.T, Options) *Snapshot {
	return func(t *testing.T, opts Options) *Snapshot {
		s := cluster(t, opts)
		s.Tracking.Since = metav1.NewMicroTime(now.Add(-12 * time.Minute))
		s.Tracking.LastProgress = s.Tracking.Since
		if p := Make(s, opts, now.Add(-11*time.Minute)); p.Tracking != nil {
			s.Tracking = *p.Tracking
		}
		return s
	}
}

// paced gives the speakers' DaemonSet, with frr-k8s, as the move onto frr-k8s
// writes it, and a rollout of desired nodes.
func paced(desired, updated, available int64) func(*Snapshot) {
	return func(s *Snapshot) {
		settings, err := manifests.SettingsFor(planOptions().Environment, metallbObject(frrK8sSpec))
		if err != nil {
			panic(err)
		}
		settings.SpeakersMoveOntoFRRK8s = true
		objs, err := manifests.Render(settings, "a2V5")
		if err != nil {
			panic(err)
		}
		i := speakerRef.in(objs)
		speakers := objects.Applied(objs[i]).DeepCopy()
		speakers.SetUID(s.live(objects.DaemonSet, manifests.SpeakerName).GetUID())
		rolledOut(speakers, desired, updated, available)
		s.Owned[objects.KeyOf(speakers)] = speakers
	}
}

// The speakers are paced while they move from native BGP onto frr-k8s (the
// module's or the platform's), from the write that starts the move until its
// rollout is done, and at no other time.
func TestSpeakersPacedOntoFRRK8s(t *testing.T) {
	notObserved := func(s *Snapshot) { s.live(objects.DaemonSet, manifests.SpeakerName).SetGeneration(2) }
	for _, tc := range []struct {
		name    string
		cluster func(*testing.T, Options) *Snapshot
		want    bool
	}{
		{"native speakers, frr-k8s chosen: the move starts", with(running("A"), withSpec(frrK8sSpec)), true},
		{"native speakers, OpenShift's frr-k8s chosen: the move starts", with(running("A"), withSpec(frrK8sSpec), platformFRR(true)), true},
		{"the move written, not yet seen by the DaemonSet controller", with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), paced(3, 3, 3), notObserved), true},
		{"the move under way, 1 of 3 nodes", with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), paced(3, 1, 2)), true},
		{"the move done: the pace goes", with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), paced(3, 3, 3)), false},
		{"speakers on frr-k8s upgraded: their sessions stay in frr-k8s, no pace", with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec), frrK8sAt(3, 3, 3), func(s *Snapshot) {
			rolledOut(s.live(objects.DaemonSet, manifests.SpeakerName), 3, 1, 2)
		}), false},
		{"back to native: no pace", with(runningWith("A", frrK8sSpec), withSpec(v1beta1.MetalLBSpec{})), false},
		{"native, no change", running("A"), false},
		{"a new installation with frr-k8s: no path to lose", with(empty, withSpec(frrK8sSpec)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.cluster(t, planOptions())
			env := planOptions().Environment
			env.PlatformFRRK8s = s.PlatformFRRK8s
			settings, err := manifests.SettingsFor(env, s.MetalLB)
			if err != nil {
				t.Fatal(err)
			}
			if got := speakersMoveOntoFRRK8s(s, settings); got != tc.want {
				t.Errorf("speakers paced: %t, want %t", got, tc.want)
			}
		})
	}
}

// A restarted operator reads frr-k8s's pods when some may have been left by
// their DaemonSet: its other objects are still there, it is not.
func TestFRRK8sMayBeLeaving(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func(*testing.T, Options) *Snapshot
		want    bool
	}{
		{"native, frr-k8s never used", running("A"), false},
		{"frr-k8s running", runningWith("A", frrK8sSpec), false},
		{"its DaemonSet going", with(runningWith("A", frrK8sSpec), frrK8sDaemonGoing), true},
		{"its DaemonSet gone, its other objects kept", with(runningWith("A", frrK8sSpec), frrK8sDaemonGone), true},
		{"all of it gone but its CRDs", with(runningWith("A", frrK8sSpec), func(s *Snapshot) {
			for key := range s.Owned {
				if strings.HasPrefix(key.Name, manifests.FRRK8sPrefix) {
					delete(s.Owned, key)
				}
			}
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FRRK8sMayBeLeaving(tc.cluster(t, planOptions()), manifests.DefaultNamespace); got != tc.want {
				t.Errorf("FRRK8sMayBeLeaving = %v, want %v", got, tc.want)
			}
		})
	}
}
