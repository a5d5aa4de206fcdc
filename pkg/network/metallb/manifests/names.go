package manifests

import (
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultNamespace is where MetalLB runs unless the operator is told otherwise.
const DefaultNamespace = "metallb-system"

// ModuleName names the MetalLB module: its metrics' operand, and its
// ClusterOperator.
const ModuleName = "metallb"

// ObjectName is the name of the one MetalLB object that counts.
const ObjectName = "metallb"

// FieldOwner is the field manager of everything the module applies.
const FieldOwner = "cluster-network-operator"

// MetalLBCRD is the name of the MetalLB object's CRD.
const MetalLBCRD = "metallbs.metallb.io"

// The names MetalLB's own manifests give the objects the module looks at, which
// the templates of bindata/metallb keep, so that docs, dashboards and existing
// installations line up (TestNamesAreTheTemplates holds the two together).
// MetalLB labels its workloads with their names as components (ComponentOf).
const (
	ControllerName       = "controller" // the Deployment
	SpeakerName          = "speaker"    // the DaemonSet
	MemberlistSecret     = "memberlist"
	WebhookConfiguration = "metallb-webhook-configuration"
	WebhookService       = "metallb-webhook-service"
	// BGPPeersCRD serves BGPPeers in two versions, which the controller
	// converts between behind WebhookService.
	BGPPeersCRD = "bgppeers.metallb.io"
	// metricsPort serves both components' metrics.
	metricsPort = 9120

	// frr-k8s's, with the frr-k8s BGP backend; all its objects' names begin
	// with FRRK8sPrefix.
	FRRK8sPrefix               = "frr-k8s-"
	FRRK8sName                 = FRRK8sPrefix + "daemon"        // the DaemonSet
	FRRK8sStatusCleaner        = FRRK8sPrefix + "statuscleaner" // the Deployment, which serves its webhook
	FRRK8sWebhookConfiguration = FRRK8sPrefix + "validating-webhook-configuration"
)

// BGPTypeEnv is the speaker's variable that names its BGP backend
// (080-speaker.yaml): frr-k8s, or native when unset.
const BGPTypeEnv = "METALLB_BGP_TYPE"

// MemberlistSecretKey is the key of the memberlist Secret that MetalLB's
// speakers read their memberlist key from.
const MemberlistSecretKey = "secretkey"

// SpeakerPods selects the speakers' pods, as MetalLB's memberlist does
// (METALLB_ML_LABELS); FRRK8sPods, those of frr-k8s's DaemonSet; NodePods,
// both, and MetalLB's controller.
var (
	SpeakerPods = labels.Set{"app": "metallb", "component": SpeakerName}
	FRRK8sPods  = labels.Set{"app": "frr-k8s"}
	NodePods    = mustSelector("app in (metallb, frr-k8s)")
)

func mustSelector(s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// Ownership labels: every object the operator renders carries them, and pruning
// only ever touches objects that do.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "cluster-network-operator"
	PartOfLabel    = "app.kubernetes.io/part-of"
	PartOf         = "metallb"
)

// Ownership selects what the module owns: what it may prune.
var Ownership = labels.Set{ManagedByLabel: ManagedBy, PartOfLabel: PartOf}

var ownershipSelector = Ownership.AsSelector()

// Owned tells whether an object's labels make it the module's.
func Owned(objectLabels map[string]string) bool {
	return ownershipSelector.Matches(labels.Set(objectLabels))
}

// Annotations the module reads and writes.
const (
	// ReleaseVersionAnnotation records on each workload the release it was
	// rendered for.
	ReleaseVersionAnnotation = "release.openshift.io/version"
	// AdoptAnnotation, set to "true" on MetalLB's namespace, lets the operator
	// take over MetalLB objects another installation created.
	AdoptAnnotation = "networkoperator.openshift.io/adopt-metallb"
	// TrackingAnnotation, on MetalLB's namespace, keeps the rollout tracking
	// across operator restarts (see status.Tracking).
	TrackingAnnotation = "networkoperator.openshift.io/metallb-rollout"
	// MemberlistConfigAnnotation, on the speakers' pod template, is a digest of
	// their memberlist timing, so that changing it restarts them.
	MemberlistConfigAnnotation = "networkoperator.openshift.io/memberlist-config"
)

// MetalLB's configuration kinds, and the reports its components write on
// the configuration they loaded.
var (
	IPAddressPoolKind      = metallbv1beta1.GroupVersion.WithKind("IPAddressPool")
	L2AdvertisementKind    = metallbv1beta1.GroupVersion.WithKind("L2Advertisement")
	BGPAdvertisementKind   = metallbv1beta1.GroupVersion.WithKind("BGPAdvertisement")
	BGPPeerKind            = metallbv1beta2.GroupVersion.WithKind("BGPPeer")
	BFDProfileKind         = metallbv1beta1.GroupVersion.WithKind("BFDProfile")
	CommunityKind          = metallbv1beta1.GroupVersion.WithKind("Community")
	ConfigurationStateKind = metallbv1beta1.GroupVersion.WithKind("ConfigurationState")
)

// BGPSessionStateKind is frr-k8s's report of a node's BGP session with a
// peer; it is served where frr-k8s runs.
var BGPSessionStateKind = schema.GroupVersionKind{Group: "frrk8s.metallb.io", Version: "v1beta1", Kind: "BGPSessionState"}

// The labels of MetalLB's ServiceL2Statuses and ServiceBGPStatuses that name
// the Service announced.
const (
	AnnouncedServiceNameLabel      = "metallb.io/service-name"
	AnnouncedServiceNamespaceLabel = "metallb.io/service-namespace"
)

// ConfigKinds are MetalLB's configuration kinds: one object of any of them in
// MetalLB's namespace is the user asking for MetalLB.
var ConfigKinds = []schema.GroupVersionKind{
	IPAddressPoolKind, L2AdvertisementKind, BGPAdvertisementKind, BGPPeerKind, BFDProfileKind, CommunityKind,
}

// MonitoringKinds are prometheus-operator's kinds the module renders, only
// where their CRDs exist (Environment.Monitoring): a cluster without them
// costs no watch.
var MonitoringKinds = []schema.GroupVersionKind{
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"},
}

// MonitoringCRDs are the names of the CRDs of MonitoringKinds.
func MonitoringCRDs() []string {
	var names []string
	for _, gvk := range MonitoringKinds {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		names = append(names, plural.Resource+"."+gvk.Group)
	}
	return names
}

// What MetalLB's ConfigurationStates say: the labels that name the component
// (and the node of a speaker) that wrote one, and the result of a
// configuration it refused.
const (
	ConfigurationComponentLabel = "metallb.io/component-type"
	ConfigurationNodeLabel      = "metallb.io/node-name"
	ConfigurationInvalid        = "Invalid"
)

// ComponentOf tells which of MetalLB's components a workload runs, by its
// labels, or "": upstream's manifests (and the upstream operator) label
// workloads app=metallb and component, its Helm chart with the recommended
// app.kubernetes.io labels.
func ComponentOf(labels map[string]string) string {
	switch {
	case labels["app"] == "metallb":
		return labels["component"]
	case labels["app.kubernetes.io/name"] == "metallb":
		return labels["app.kubernetes.io/component"]
	}
	return ""
}
