package plan

import (
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// What the module renders, by part, in apply order.
var (
	foundation = []string{"Namespace/metallb-system",
		"CustomResourceDefinition/bfdprofiles.metallb.io", "CustomResourceDefinition/bgpadvertisements.metallb.io",
		"CustomResourceDefinition/bgppeers.metallb.io", "CustomResourceDefinition/communities.metallb.io",
		"CustomResourceDefinition/configurationstates.metallb.io", "CustomResourceDefinition/ipaddresspools.metallb.io",
		"CustomResourceDefinition/l2advertisements.metallb.io", "CustomResourceDefinition/servicebgpstatuses.metallb.io",
		"CustomResourceDefinition/servicel2statuses.metallb.io", "CustomResourceDefinition/metallbs.metallb.io"}
	workloadParts = []string{"ServiceAccount/controller", "ServiceAccount/speaker", "Role/controller", "Role/pod-lister",
		"ClusterRole/metallb-system:controller", "ClusterRole/metallb-system:speaker", "RoleBinding/controller", "RoleBinding/pod-lister",
		"ClusterRoleBinding/metallb-system:controller", "ClusterRoleBinding/metallb-system:speaker", "ConfigMap/metallb-excludel2",
		"ConfigMap/metallb-memberlist-config",
		"Secret/metallb-webhook-cert", "Secret/memberlist", "Service/metallb-webhook-service", "NetworkPolicy/controller",
		"NetworkPolicy/default-deny", "Deployment/controller", "DaemonSet/speaker"}
	webhooks = "ValidatingWebhookConfiguration/metallb-webhook-configuration"
	// deactivated is what deactivation prunes: all but the CRDs, the namespace
	// and the memberlist key, dependents first.
	deactivated = []string{webhooks, "DaemonSet/speaker", "Deployment/controller", "NetworkPolicy/default-deny",
		"NetworkPolicy/controller", "Service/metallb-webhook-service", "Secret/metallb-webhook-cert", "ConfigMap/metallb-excludel2",
		"ConfigMap/metallb-memberlist-config",
		"ClusterRoleBinding/metallb-system:controller", "ClusterRoleBinding/metallb-system:speaker", "RoleBinding/controller",
		"RoleBinding/pod-lister", "ClusterRole/metallb-system:controller", "ClusterRole/metallb-system:speaker", "Role/controller",
		"Role/pod-lister", "ServiceAccount/controller", "ServiceAccount/speaker"}
)

// heldInvalid is what an invalid spec with no valid one before holds.
var heldInvalid = func() []string {
	var out []string
	for _, o := range append(workloadParts, webhooks) {
		out = append(out, o+": the spec is invalid and no valid spec was applied before")
	}
	return out
}()

// speakersOnInfra is a spec that differs from the defaults.
var speakersOnInfra = v1beta1.MetalLBSpec{NodeSelector: v1beta1.NodeSelector{"node-role.kubernetes.io/infra": ""}}

const notConfigured = "Available True NotConfigured: MetalLB is not configured: create an IPAddressPool in metallb-system to deploy it."

var planCases = []planCase{
	{name: "nothing configured: the namespace and the CRDs, and the version", cluster: empty,
		want: planned{apply: foundation, version: "A", conditions: []string{notConfigured, "Degraded False AsExpected: MetalLB runs as configured."}}},
	{name: "first activation: all but the webhooks, which wait for the controller", cluster: with(empty, pool),
		want: planned{apply: cat(foundation, workloadParts), withheld: []string{webhooks + ": which serves the webhooks, is not available yet"},
			events:     []string{"Normal MemberlistKeyGenerated Secret/memberlist: Generated the speakers' memberlist key."},
			conditions: []string{"Available False Deploying: MetalLB's workloads are being created.", "Progressing True RollingOut: Rolling out A: controller: the Deployment is being created, speaker: the DaemonSet is being created"},
			requeue:    10 * time.Minute}},
	{name: "network policies turned off: the default deny deleted first, then the allow-list; nothing else changes",
		cluster: with(settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))),
			withSpec(v1beta1.MetalLBSpec{NetworkPolicies: &v1beta1.NetworkPolicies{Mode: v1beta1.NetworkPoliciesDisabled}})),
		want: planned{prune: []string{"NetworkPolicy/default-deny", "NetworkPolicy/controller"}, version: "A",
			statuses: []string{"metallb-system/metallb"}, conditions: []string{"Available True AsExpected", "Progressing False AsExpected"}}},
	{name: "running and idle: nothing written, nothing told", cluster: settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))),
		want: planned{version: "A", conditions: []string{"Available True AsExpected: a speaker runs on every node", "Progressing False AsExpected"}}},
	{name: "platform not allowed: what runs stays, the pool and the tuning object told why", cluster: with(running("A"), awsNodes, withSpec(v1beta1.MetalLBSpec{})),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"},
			events: []string{"Warning PlatformNotSupported IPAddressPool/pool1: the platform is AWS (from node n0's provider ID aws:///us-east-1a/i-0)",
				"Warning PlatformNotSupported L2Advertisement/l2: the platform is AWS",
				"Warning PlatformNotSupported MetalLB/metallb: To deploy it anyway, start the operator with --platform=BareMetal."},
			conditions: []string{"Degraded True PlatformNotSupported: the operator deploys MetalLB only on BareMetal, None", "Available True PlatformNotSupported: MetalLB is not deployed: the platform is"}}},
	{name: "platform not allowed and nothing configured: not degraded", cluster: with(empty, awsNodes),
		want: planned{conditions: []string{"Degraded False AsExpected", "Available True PlatformNotSupported"}}},
	{name: "the Infrastructure object decides the platform", cluster: with(empty, pool, func(s *Snapshot) { s.Platform.Infrastructure = "AWS" }),
		want: planned{conditions: []string{"Degraded True PlatformNotSupported: the platform is AWS (from Infrastructure cluster)"},
			events: []string{"Warning PlatformNotSupported IPAddressPool/pool1: from Infrastructure cluster",
				"Warning PlatformNotSupported L2Advertisement/l2: from Infrastructure cluster"}}},
	{name: "--platform overrides the nodes", opts: func(o *Options) { o.Platform = "BareMetal" }, cluster: with(empty, pool, awsNodes),
		want: planned{apply: cat(foundation, workloadParts), withheld: []string{webhooks + ": not available yet"},
			events:     []string{"Normal MemberlistKeyGenerated Secret/memberlist: Generated"},
			conditions: []string{"Available False Deploying", "Degraded False AsExpected"}, requeue: 10 * time.Minute}},
	{name: "a pool in another namespace is ignored, and told so", cluster: with(empty, func(s *Snapshot) {
		s.Configs.Elsewhere = append(s.Configs.Elsewhere, configObject("IPAddressPool", "default", "elsewhere"))
	}), want: planned{apply: foundation, version: "A",
		events:     []string{"Warning Ignored IPAddressPool/elsewhere: IPAddressPool default/elsewhere is outside metallb-system and is ignored: MetalLB reads its configuration only from metallb-system"},
		conditions: []string{notConfigured, "Degraded False AsExpected: MetalLB runs as configured. IPAddressPool default/elsewhere is outside metallb-system and is ignored."}}},
	{name: "another installation's speaker: nothing written, the speaker told", cluster: with(empty, pool, helmSpeaker),
		want: planned{
			events: []string{"Warning ForeignObjects DaemonSet/speaker: DaemonSet metallb-system/speaker (written by helm)"},
			conditions: []string{"Degraded True ForeignObjects: Nothing was changed. Remove that installation, or hand MetalLB over to this operator, which then takes those objects over in place (the addresses and the memberlist key are kept; MetalLB's pods restart once, the speakers one at a time): kubectl annotate namespace metallb-system networkoperator.openshift.io/adopt-metallb=true",
				"Available True ForeignObjects: Another installation runs MetalLB"}}},
	{name: "adoption: with the annotation, the foreign speaker is taken over, and rendered once the controller has rolled out", cluster: with(empty, pool, helmSpeaker, adoptAnnotated),
		want: planned{apply: cat(foundation[1:], workloadParts[:len(workloadParts)-1]), withheld: []string{webhooks + ": not available yet"}, adopt: []string{"DaemonSet/speaker"},
			held: []string{"DaemonSet/speaker: the controller has not finished rolling out A"},
			events: []string{"Normal Adopted DaemonSet/speaker: Taken over from another installation (written by helm)",
				"Normal MemberlistKeyGenerated Secret/memberlist: Generated"},
			conditions: []string{"Degraded False AsExpected", "Available False Deploying"}, requeue: 10 * time.Minute}},
	{name: "another operator's MetalLB CRD: it manages MetalLB, this one stands down and writes no status",
		cluster: with(empty, pool, withSpec(v1beta1.MetalLBSpec{}), upstreamOperatorCRD, func(s *Snapshot) {
			s.Ignored = append(s.Ignored, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "metallb"}})
		}),
		want: planned{events: []string{"Normal ManagedElsewhere CustomResourceDefinition/metallbs.metallb.io: Another operator manages MetalLB: " +
			"CustomResourceDefinition metallbs.metallb.io is not this operator's (OLM's metallb-operator.metallb-system, written by olm). " +
			"This operator deploys nothing and writes no MetalLB object. To hand MetalLB over to this operator, uninstall the other one, keeping its CRDs, then: " +
			"kubectl annotate namespace metallb-system networkoperator.openshift.io/adopt-metallb=true"},
			conditions: []string{"Degraded False ManagedElsewhere: Another operator manages MetalLB", "Available True ManagedElsewhere: This operator deploys nothing"}}},
	{name: "handed over: the other operator's CRD and memberlist key taken over, their owner references dropped",
		cluster: with(empty, pool, upstreamOperatorCRD, upstreamMemberlist, adoptAnnotated),
		want: planned{apply: cat(foundation[1:], workloadParts), withheld: []string{webhooks + ": not available yet"},
			adopt: []string{"CustomResourceDefinition/metallbs.metallb.io", "Secret/memberlist"},
			events: []string{"Normal Adopted CustomResourceDefinition/metallbs.metallb.io: Taken over from another installation (OLM's metallb-operator.metallb-system, written by olm)",
				"Normal Adopted Secret/memberlist: (Deployment controller, written by controller)", "Normal MemberlistKeyGenerated Secret/memberlist"},
			conditions: []string{"Degraded False AsExpected", "Available False Deploying"}, requeue: 10 * time.Minute}},
	{name: "the webhooks once the controller is available", cluster: with(running("A"), without(objects.ValidatingWebhookConfiguration, manifests.WebhookConfiguration)),
		want: planned{apply: []string{webhooks}, version: "A", conditions: []string{"Available True AsExpected"}}},
	{name: "the webhooks kept while the controller is briefly unavailable (a drain)", cluster: with(running("A"), controllerAt(3, 1, 0)),
		want: planned{version: "A", requeue: 10 * time.Minute,
			conditions: []string{"Available False ControllerUnavailable: no address is handed out. controller: 1 of 1 replicas updated, 1 unavailable",
				"Progressing True RollingOut: Rolling out A"}}},
	{name: "webhooks off: none rendered, none withheld", opts: func(o *Options) { o.Webhooks = false }, cluster: running("A"),
		want: planned{version: "A", conditions: []string{"Available True AsExpected"}}},
	{name: "invalid spec, no valid one applied before: nothing running changes", cluster: with(runningWith("A", speakersOnInfra), withSpec(v1beta1.MetalLBSpec{LogLevel: "loud"})),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, held: heldInvalid,
			conditions: []string{`Degraded True InvalidConfiguration: spec.logLevel: Unsupported value: "loud"`,
				"Degraded True InvalidConfiguration: no valid spec was applied before (status.appliedSpec is empty), so nothing running is changed"}}},
	{name: "invalid first spec: nothing deployed", cluster: with(empty, withSpec(v1beta1.MetalLBSpec{LogLevel: "loud"})),
		want: planned{apply: foundation, statuses: []string{"metallb-system/metallb"}, held: heldInvalid[:len(heldInvalid)-1], requeue: 10 * time.Minute,
			withheld:   []string{webhooks + ": not available yet"},
			conditions: []string{"Degraded True InvalidConfiguration: nothing running is changed", "Available False Deploying"}}},
	{name: "invalid spec after a valid one: the last valid spec keeps running", cluster: with(runningWith("A", v1beta1.MetalLBSpec{LogLevel: v1beta1.LogLevelDebug}),
		withSpec(v1beta1.MetalLBSpec{LogLevel: "loud"}), applied(`{"logLevel":"debug"}`)),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, conditions: []string{`Degraded True InvalidConfiguration: spec.logLevel: Unsupported value: "loud"`}}},
	{name: "a priority class that does not exist", cluster: with(running("A"), withSpec(urgentSpeakers)),
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"}, held: heldInvalid,
			conditions: []string{`Degraded True InvalidConfiguration: spec.speakerConfig.priorityClassName: Not found: "urgent"`}}},
	{name: "the priority class exists: the speakers get it", cluster: with(running("A"), withSpec(urgentSpeakers), func(s *Snapshot) { s.PriorityClasses.Insert("urgent") }),
		want: planned{apply: []string{"DaemonSet/speaker"}, version: "A", statuses: []string{"metallb-system/metallb"}, conditions: []string{"Degraded False AsExpected"}}},
	{name: "upgrade, controller not rolled yet: the controller first, the speakers held", opts: releaseB, cluster: running("A"),
		want: planned{apply: []string{"Deployment/controller"}, held: []string{"DaemonSet/speaker: the controller has not finished rolling out B"}, version: "A",
			conditions: []string{"Progressing True RollingOut: Rolling out B: controller: not started, speaker: not started"}, requeue: 10 * time.Minute}},
	{name: "an adopted speaker, the controller rolled out: the speaker follows", cluster: with(running("A"), adoptedSpeaker),
		want: planned{apply: []string{"DaemonSet/speaker"}, version: "A", conditions: []string{"Degraded False AsExpected"}, requeue: 10 * time.Minute}},
	{name: "an adopted controller keeps a field of the other installation's: rolled out, the speakers follow all the same",
		cluster: with(running("A"), adoptedSpeaker, controllerKeepsForeignEnv),
		want:    planned{apply: []string{"Deployment/controller", "DaemonSet/speaker"}, version: "A", conditions: []string{"Degraded False AsExpected"}, requeue: 10 * time.Minute}},
	{name: "upgrade, controller rolled out: the speakers follow", opts: releaseB, cluster: with(running("A"), rolledTo("B", manifests.ControllerName), upgrading),
		want: planned{apply: []string{"DaemonSet/speaker"}, version: "A", conditions: []string{"Progressing True RollingOut: Rolling out B"}, requeue: 10 * time.Minute}},
	{name: "upgrade, speakers rolling: nothing to write, how far told", opts: releaseB, cluster: speakersRolling,
		want: planned{version: "A", requeue: 10 * time.Minute, conditions: []string{
			"Progressing True RollingOut: Rolling out B: controller: 1 of 1 replicas updated, speaker: 1 of 3 nodes updated, 1 unavailable",
			"Available True AsExpected"}}},
	{name: "upgrade, a restart in the middle: the same rollout, its timers kept", opts: releaseB, cluster: restartedWhileRolling,
		want: planned{version: "A", requeue: 6 * time.Minute, conditions: []string{"Progressing True RollingOut: speaker: 1 of 3 nodes updated"}}},
	{name: "upgrade done: the new version reported, and told", opts: releaseB, cluster: with(running("A"), rolledTo("B", manifests.ControllerName, manifests.SpeakerName), upgrading,
		withSpec(v1beta1.MetalLBSpec{}, recorded(status.Progressing, metav1.ConditionTrue, "RollingOut"))),
		want: planned{version: "B", statuses: []string{"metallb-system/metallb"}, events: []string{"Normal ProgressingFalse MetalLB/metallb: AsExpected: No rollout is in progress."},
			conditions: []string{"Progressing False AsExpected", "Available True AsExpected"}}},
	{name: "upgrade progressing within a step: shown once half the hung timeout has passed, nothing written until then", opts: releaseB, cluster: progressedWithinStep,
		want: planned{version: "A", requeue: 5*time.Minute - 2*time.Second, conditions: []string{"Progressing True RollingOut: speaker: 1 of 3 nodes updated, 1 unavailable"}}},
	{name: "upgrade progressing a step further within seconds: shown at once", opts: releaseB, cluster: progressedAStep,
		want: planned{version: "A", requeue: 10 * time.Minute, conditions: []string{"Progressing True RollingOut: speaker: 2 of 3 nodes updated, 1 unavailable"}}},
	{name: "hung: no progress past the timeout, the nodes named", opts: releaseB, cluster: hungRollout,
		want: planned{version: "A", conditions: []string{
			"Degraded True RolloutHung: has made no progress for 10m0s (Rolling out B: controller: 1 of 1 replicas updated, speaker: 1 of 3 nodes updated, 1 unavailable); the speaker is not ready on nodes: node-2.",
			"Upgradeable False RolloutHung"}}},
	{name: "deactivation while a rollout is in flight: all but the kept objects pruned, BGPPeers converting with None first", opts: releaseB,
		cluster: with(speakersRolling, unconfigured),
		want: planned{apply: []string{"CustomResourceDefinition/" + manifests.BGPPeersCRD}, prune: deactivated, version: "B",
			conditions: []string{notConfigured, "Progressing False AsExpected"}}},
	{name: "a MetalLB object of another name is told it is ignored", cluster: with(running("A"), func(s *Snapshot) {
		s.Ignored = append(s.Ignored, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "metallb"}})
	}), want: planned{version: "A", statuses: []string{"default/metallb"}}},
	{name: "the memberlist Secret deleted while speakers run: a new key, and what to do", cluster: with(running("A"), without(objects.Secret, manifests.MemberlistSecret), newKey),
		want: planned{apply: []string{"Secret/memberlist"}, version: "A",
			events: []string{"Warning MemberlistKeyRegenerated Secret/memberlist: restart them so that they form one cluster again: kubectl rollout restart daemonset/speaker -n metallb-system"}}},
	{name: "a write fails: Degraded says so, with an Event", cluster: settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))), actErr: errApply,
		want: planned{version: "A", statuses: []string{"metallb-system/metallb"},
			events:     []string{"Warning DegradedTrue MetalLB/metallb: ApplyFailed: Applying MetalLB's manifests failed, will retry: applying DaemonSet"},
			conditions: []string{"Degraded True ApplyFailed: will retry: applying DaemonSet metallb-system/speaker"}}},
	{name: "with no tuning object, transitions told on the ClusterOperator", cluster: with(running("A"), clusterOperatorRecorded(status.Available, configv1.ConditionFalse, "Deploying")),
		want: planned{version: "A", events: []string{"Normal AvailableTrue ClusterOperator/metallb: AsExpected: MetalLB's controller is available and a speaker runs on every node."}}},
}

var urgentSpeakers = v1beta1.MetalLBSpec{SpeakerConfig: &v1beta1.SpeakerConfig{Config: v1beta1.Config{PriorityClassName: "urgent"}}}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func releaseB(o *Options) { o.Images = imagesOf("B") }

// pool is the configuration of a first activation: a pool and a layer-2
// advertisement for every pool.
func pool(s *Snapshot) {
	l2 := configObject(manifests.L2AdvertisementKind.Kind, manifests.DefaultNamespace, "l2")
	s.Configs.InNamespace = append(s.Configs.InNamespace, configObject(manifests.IPAddressPoolKind.Kind, manifests.DefaultNamespace, "pool1"), l2)
	s.Advertisements = append(s.Advertisements, Advertisement{Object: l2})
}

func unconfigured(s *Snapshot) {
	s.Configs.InNamespace, s.MetalLB, s.Advertisements = nil, nil, nil
}

func newKey(s *Snapshot) { s.MemberlistKey = "bmV3" }

func withSpec(spec v1beta1.MetalLBSpec, conditions ...metav1.Condition) func(*Snapshot) {
	return func(s *Snapshot) { s.MetalLB = metallbObject(spec, conditions...) }
}

func applied(spec string) func(*Snapshot) {
	return func(s *Snapshot) { s.MetalLB.Status.AppliedSpec = rawSpec(spec) }
}

func without(gvk schema.GroupVersionKind, name string) func(*Snapshot) {
	return func(s *Snapshot) { delete(s.Owned, objects.KeyOf(s.live(gvk, name))) }
}

// helmSpeaker is a speaker DaemonSet another installation created.
func helmSpeaker(s *Snapshot) {
	ds := &unstructured.Unstructured{}
	ds.SetGroupVersionKind(objects.DaemonSet)
	ds.SetNamespace(manifests.DefaultNamespace)
	ds.SetName(manifests.SpeakerName)
	live := objects.Metadata(objects.DaemonSet)
	live.Namespace, live.Name, live.UID = manifests.DefaultNamespace, manifests.SpeakerName, "uid-helm-speaker"
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate}}
	s.Foreign = append(s.Foreign, objects.Foreign{Object: ds, Live: live})
}

// upstreamOperatorCRD is the MetalLB CRD as OLM installs upstream's operator.
func upstreamOperatorCRD(s *Snapshot) {
	s.Foreign = append(s.Foreign, foreignObject(objects.CustomResourceDefinition, "", "metallbs.metallb.io", "olm", func(m *metav1.PartialObjectMetadata) {
		m.Labels = map[string]string{olmLabelPrefix + "metallb-operator.metallb-system": ""}
	}))
}

// upstreamMemberlist is the memberlist Secret upstream's controller creates,
// owned by its Deployment.
func upstreamMemberlist(s *Snapshot) {
	s.Foreign = append(s.Foreign, foreignObject(objects.Secret, manifests.DefaultNamespace, manifests.MemberlistSecret, "controller", func(m *metav1.PartialObjectMetadata) {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: manifests.ControllerName, UID: "uid-upstream-controller"}}
	}))
}

// foreignObject is a rendered object that another manager wrote.
func foreignObject(gvk schema.GroupVersionKind, namespace, name, manager string, edit func(*metav1.PartialObjectMetadata)) objects.Foreign {
	o := objects.Empty(gvk)
	o.SetNamespace(namespace)
	o.SetName(name)
	live := objects.Metadata(gvk)
	live.Namespace, live.Name, live.UID = namespace, name, types.UID("uid-"+name)
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate}}
	edit(live)
	return objects.Foreign{Object: o, Live: live}
}

// adoptAnnotated has the namespace, owned, carry the adoption annotation.
func adoptAnnotated(s *Snapshot) {
	objs, err := manifests.Render(manifests.Settings{Environment: planOptions().Environment}, "")
	if err != nil {
		panic(err)
	}
	ns := objects.Applied(objs[0]).DeepCopy()
	ns.SetAnnotations(map[string]string{manifests.AdoptAnnotation: "true", objects.AppliedHashAnnotation: ns.GetAnnotations()[objects.AppliedHashAnnotation]})
	s.Owned[objects.KeyOf(ns)] = ns
	s.AdoptionAllowed = true
}

// controllerKeepsForeignEnv is the controller as a takeover leaves it: with a
// variable of the hand install's that another field manager owns, which the
// module's apply leaves, so that the module always finds it to write.
func controllerKeepsForeignEnv(s *Snapshot) {
	containers, _, _ := unstructured.NestedSlice(s.live(objects.Deployment, manifests.ControllerName).Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	c["env"] = append([]any{map[string]any{"name": "METALLB_ML_SECRET_NAME", "value": "memberlist"}}, c["env"].([]any)...)
	_ = unstructured.SetNestedSlice(s.live(objects.Deployment, manifests.ControllerName).Object, containers, "spec", "template", "spec", "containers")
}

func controllerAt(desired, updated, available int64) func(*Snapshot) {
	return func(s *Snapshot) {
		rolledOut(s.live(objects.Deployment, manifests.ControllerName), desired, updated, available)
	}
}

// rolledTo replaces workloads by those of another release, rolled out.
func rolledTo(release string, workloads ...string) func(*Snapshot) {
	return rolledToWith(release, v1beta1.MetalLBSpec{}, workloads...)
}

// rolledToWith replaces objects by those of another release and spec, rolled
// out: "Kind/name", or a workload's name.
func rolledToWith(release string, spec v1beta1.MetalLBSpec, names ...string) func(*Snapshot) {
	return func(s *Snapshot) {
		opts := planOptions()
		opts.Images = imagesOf(release)
		opts.PlatformFRRK8s = s.PlatformFRRK8s // rendered for the snapshot's platform
		next := runningWith(release, spec)(nil, opts)
		for _, o := range next.Owned {
			workload := o.GetKind() == objects.Deployment.Kind || o.GetKind() == objects.DaemonSet.Kind
			if slices.Contains(names, o.GetKind()+"/"+o.GetName()) || workload && slices.Contains(names, o.GetName()) {
				s.Owned[objects.KeyOf(o)] = o
			}
		}
	}
}

// upgrading is the tracking of the rollout of B, started a minute ago.
func upgrading(s *Snapshot) {
	since := metav1.NewMicroTime(now.Add(-time.Minute))
	s.Tracking = status.Tracking{Version: "A", Target: "B", Since: since, LastProgress: since}
}

// speakersRolling is B's controller rolled out and one speaker of three
// replaced, another down.
func speakersRolling(t *testing.T, opts Options) *Snapshot {
	s := with(running("A"), rolledTo("B", manifests.ControllerName, manifests.SpeakerName), upgrading)(t, opts)
	rolledOut(s.live(objects.DaemonSet, manifests.SpeakerName), 3, 1, 2)
	s.SpeakerPods = []corev1.Pod{pod("node-0", true), pod("node-1", true), pod("node-2", false)}
	return s
}

// restartedWhileRolling is speakersRolling as an operator left it four
// minutes ago, before it was restarted: its tracking kept on the namespace.
func restartedWhileRolling(t *testing.T, opts Options) *Snapshot {
	s := speakersRolling(t, opts)
	s.Tracking.Since = metav1.NewMicroTime(now.Add(-20 * time.Minute))
	s.Tracking.LastProgress = s.Tracking.Since
	if p := Make(s, opts, now.Add(-4*time.Minute)); p.Tracking != nil {
		s.Tracking = *p.Tracking
	}
	return s
}

// recordedRolling is speakersRolling as recorded two seconds ago, tracking
// and status.
func recordedRolling(t *testing.T, opts Options) *Snapshot {
	s := speakersRolling(t, opts)
	p := Make(s, opts, now.Add(-2*time.Second))
	if p.Tracking == nil {
		t.Fatal("the rollout's progress was not recorded")
	}
	s.Tracking = *p.Tracking
	if st := p.Report(nil).MetalLB; st != nil {
		s.MetalLB.Status = *st
	}
	return s
}

// progressedWithinStep is recordedRolling with the unavailable speaker
// available since, no more updated.
func progressedWithinStep(t *testing.T, opts Options) *Snapshot {
	s := recordedRolling(t, opts)
	rolledOut(s.live(objects.DaemonSet, manifests.SpeakerName), 3, 1, 3)
	return s
}

// progressedAStep is recordedRolling with one more speaker replaced since.
func progressedAStep(t *testing.T, opts Options) *Snapshot {
	s := recordedRolling(t, opts)
	rolledOut(s.live(objects.DaemonSet, manifests.SpeakerName), 3, 2, 2)
	return s
}

// hungRollout is speakersRolling with no progress for eleven minutes.
var hungRollout = stalled(speakersRolling)

func clusterOperatorRecorded(typ string, st configv1.ConditionStatus, reason string) func(*Snapshot) {
	return func(s *Snapshot) {
		s.ClusterOperator = &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "metallb", UID: "uid-co"}}
		s.ClusterOperator.Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.ClusterStatusConditionType(typ), Status: st, Reason: reason}}
	}
}

// settled is cluster after a reconcile a minute ago wrote its status.
func settled(cluster func(*testing.T, Options) *Snapshot) func(*testing.T, Options) *Snapshot {
	return func(t *testing.T, opts Options) *Snapshot {
		s := cluster(t, opts)
		p := Make(s, opts, now.Add(-time.Minute))
		if r := p.Report(nil); r.MetalLB != nil {
			s.MetalLB.Status = *r.MetalLB
		}
		if p.Tracking != nil {
			s.Tracking = *p.Tracking
		}
		return s
	}
}
