package plan

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// upstreamLabels and helmLabels are how upstream's manifest and its Helm
// chart label MetalLB's workloads.
var (
	upstreamLabels = func(component string) map[string]string {
		return map[string]string{"app": "metallb", "component": component}
	}
	helmLabels = func(component string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "metallb", "app.kubernetes.io/instance": "metallb",
			"app.kubernetes.io/component": component, manifests.ManagedByLabel: helmManagedBy}
	}
)

func TestMetalLBComponent(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{upstreamLabels("speaker"), "speaker"},
		{upstreamLabels("controller"), "controller"},
		{helmLabels("speaker"), "speaker"},
		{map[string]string{"app": "frr-k8s", "component": "frr-k8s"}, ""},
		{map[string]string{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}, ""},
		{nil, ""},
	} {
		if got := manifests.ComponentOf(tc.labels); got != tc.want {
			t.Errorf("metallbComponent(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}

const blocked = "Degraded True TakeoverBlocked: MetalLB was not taken over, though the networkoperator.openshift.io/adopt-metallb annotation of namespace metallb-system asks for it, and nothing was changed: "

// What stops a takeover, and what is told of a second MetalLB: each a row.
var takeoverCases = []planCase{
	{name: "takeover asked, MetalLB's speakers in another namespace: nothing adopted or written, the DaemonSet told",
		cluster: with(empty, pool, handInstalledCRD(nil), adoptAnnotated, workload(objects.DaemonSet, "metallb-elsewhere", "speaker", upstreamLabels("speaker"))),
		want: planned{
			events: []string{"Warning ForeignObjects CustomResourceDefinition/ipaddresspools.metallb.io: once what stops a takeover is resolved (MetalLBInAnotherNamespace: see those Events)",
				"Warning MetalLBInAnotherNamespace DaemonSet/speaker: DaemonSet metallb-elsewhere/speaker runs MetalLB's speaker outside metallb-system, where this operator runs MetalLB: beside it, two MetalLBs would answer for the same addresses. This operator does not move an installation between namespaces. Remove that one (with its other workloads, keeping MetalLB's CRDs) once your configuration is in metallb-system, the only namespace MetalLB reads it from: kubectl delete -n metallb-elsewhere daemonset/speaker"},
			conditions: []string{blocked + "DaemonSet metallb-elsewhere/speaker runs MetalLB's speaker outside metallb-system",
				"Available True ForeignObjects: Another installation runs MetalLB"}}},
	{name: "takeover asked, a Helm release: nothing adopted or written, the release and Helm's workloads told",
		cluster: with(empty, pool, handInstalledCRD(helmRelease), foreignWebhookService(helmRelease), adoptAnnotated,
			workload(objects.DaemonSet, manifests.DefaultNamespace, "metallb-speaker", helmLabels("speaker")),
			workload(objects.Deployment, manifests.DefaultNamespace, "metallb-controller", helmLabels("controller"))),
		want: planned{
			events: []string{"Warning ForeignObjects CustomResourceDefinition/ipaddresspools.metallb.io: (AnotherMetalLBWorkload, HelmRelease: see those Events)",
				"Warning ForeignObjects Service/metallb-webhook-service: (written by helm)",
				"Warning AnotherMetalLBWorkload DaemonSet/metallb-speaker: DaemonSet metallb-system/metallb-speaker runs MetalLB's speaker under another name than speaker, the one this operator runs: the two would serve the same addresses. Delete the one not meant to run; the addresses it served go to speaker once it is gone: kubectl delete -n metallb-system daemonset/metallb-speaker",
				"Warning AnotherMetalLBWorkload Deployment/metallb-controller: kubectl delete -n metallb-system deployment/metallb-controller",
				"Warning HelmRelease CustomResourceDefinition/ipaddresspools.metallb.io: Helm's release metallb manages 2 of the objects this operator would take over: after a takeover, helm upgrade would write them back and helm uninstall would delete them, MetalLB's CRDs (and with them every pool) among them. Make Helm forget the release, keeping what it deployed, then take Helm's label off them: kubectl delete secret -n metallb-system -l owner=helm,name=metallb; kubectl label -n metallb-system crd/ipaddresspools.metallb.io service/metallb-webhook-service app.kubernetes.io/managed-by-"},
			conditions: []string{blocked + "DaemonSet metallb-system/metallb-speaker runs MetalLB's speaker under another name"}}},
	{name: "takeover asked, two speaker DaemonSets: the one of another name told",
		cluster: with(empty, pool, helmSpeaker, adoptAnnotated, workload(objects.DaemonSet, manifests.DefaultNamespace, "speaker", upstreamLabels("speaker")),
			workload(objects.DaemonSet, manifests.DefaultNamespace, "speaker-edge", upstreamLabels("speaker"))),
		want: planned{
			events: []string{"Warning ForeignObjects DaemonSet/speaker: (AnotherMetalLBWorkload: see those Events)",
				"Warning AnotherMetalLBWorkload DaemonSet/speaker-edge: kubectl delete -n metallb-system daemonset/speaker-edge"},
			conditions: []string{blocked + "DaemonSet metallb-system/speaker-edge runs MetalLB's speaker under another name than speaker"}}},
	{name: "takeover asked, a memberlist Secret without secretkey: the Secret told how to copy its key",
		cluster: with(empty, pool, upstreamMemberlist, adoptAnnotated, func(s *Snapshot) { s.MemberlistKeys = []string{"key"} }),
		want: planned{
			events: []string{"Warning ForeignObjects Secret/memberlist: (MemberlistKeyMissing: see those Events)",
				`Warning MemberlistKeyMissing Secret/memberlist: Secret metallb-system/memberlist has no key secretkey (its keys: key): the speakers this operator runs read their memberlist key from it, and do not start without it. A takeover keeps that Secret as it is: add the key, the one your speakers use if they use one, so that old and new speakers stay one memberlist cluster while they roll: kubectl -n metallb-system patch secret memberlist -p "{\"data\":{\"secretkey\":\"$(kubectl -n metallb-system get secret memberlist -o jsonpath='{.data.key}')\"}}"`},
			conditions: []string{blocked + "Secret metallb-system/memberlist has no key secretkey (its keys: key)"}}},
	{name: "no takeover asked, a Helm release: what stops a takeover told with the foreign objects",
		cluster: with(empty, pool, handInstalledCRD(helmRelease)),
		want: planned{
			events: []string{"Warning ForeignObjects CustomResourceDefinition/ipaddresspools.metallb.io: once what stops a takeover is resolved (HelmRelease: see those Events)",
				"Warning HelmRelease CustomResourceDefinition/ipaddresspools.metallb.io: kubectl label -n metallb-system crd/ipaddresspools.metallb.io app.kubernetes.io/managed-by-"},
			conditions: []string{"Degraded True ForeignObjects: Nothing was changed. Remove that installation, or hand MetalLB over to this operator once what stops a takeover is resolved (HelmRelease: see those Events): kubectl annotate namespace metallb-system networkoperator.openshift.io/adopt-metallb=true Helm's release metallb manages 1 of the objects"}}},
	{name: "another MetalLB's speakers beside the module's: told, and what runs left as it is",
		cluster: settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}), workload(objects.DaemonSet, manifests.DefaultNamespace, "speaker", upstreamLabels("speaker")),
			workload(objects.DaemonSet, "kube-system", "metallb-speaker", helmLabels("speaker")))),
		want: planned{version: "A",
			events:     []string{"Warning MetalLBInAnotherNamespace DaemonSet/metallb-speaker: DaemonSet kube-system/metallb-speaker runs MetalLB's speaker outside metallb-system"},
			conditions: []string{"Degraded True MetalLBInAnotherNamespace: DaemonSet kube-system/metallb-speaker", "Available True AsExpected"}}},
}

func TestPlanTakeover(t *testing.T) {
	for _, tc := range takeoverCases {
		t.Run(tc.name, func(t *testing.T) {
			opts := planOptions()
			p := Make(tc.cluster(t, opts), opts, now)
			checkPlan(t, p, p.Report(tc.actErr), tc.want)
		})
	}
}

// workload is a MetalLB workload's metadata, as the lookups read it.
func workload(gvk schema.GroupVersionKind, namespace, name string, labels map[string]string) func(*Snapshot) {
	return func(s *Snapshot) {
		o := objects.Metadata(gvk)
		o.Namespace, o.Name, o.UID, o.Labels = namespace, name, types.UID("uid-"+namespace+"-"+name), labels
		s.Workloads = append(s.Workloads, o)
	}
}

// helmRelease marks an object as Helm's release metallb installs it.
func helmRelease(m *metav1.PartialObjectMetadata) {
	m.Labels = map[string]string{manifests.ManagedByLabel: helmManagedBy}
	m.Annotations = map[string]string{HelmReleaseNameAnnotation: "metallb", HelmReleaseNamespaceAnnotation: manifests.DefaultNamespace}
}

// handInstalledCRD is MetalLB's IPAddressPool CRD, as another installation
// created it; mark, if any, marks it further.
func handInstalledCRD(mark func(*metav1.PartialObjectMetadata)) func(*Snapshot) {
	manager := "kubectl-client-side-apply"
	if mark != nil {
		manager = "helm"
	}
	return func(s *Snapshot) {
		s.Foreign = append(s.Foreign, foreignObject(objects.CustomResourceDefinition, "", "ipaddresspools.metallb.io", manager, orNothing(mark)))
	}
}

func foreignWebhookService(mark func(*metav1.PartialObjectMetadata)) func(*Snapshot) {
	return func(s *Snapshot) {
		s.Foreign = append(s.Foreign, foreignObject(corev1.SchemeGroupVersion.WithKind("Service"), manifests.DefaultNamespace, "metallb-webhook-service", "helm", mark))
	}
}

func orNothing(edit func(*metav1.PartialObjectMetadata)) func(*metav1.PartialObjectMetadata) {
	if edit == nil {
		return func(*metav1.PartialObjectMetadata) {}
	}
	return edit
}
