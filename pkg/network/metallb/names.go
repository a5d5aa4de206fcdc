package metallb

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultNamespace is where MetalLB runs unless the operator is told otherwise.
const DefaultNamespace = "metallb-system"

// ObjectName is the name of the one MetalLB tuning object that counts.
const ObjectName = "metallb"

// FieldOwner is the field manager of everything the module applies.
const FieldOwner = "cluster-network-operator"

// The names MetalLB's own manifests give the objects the module looks at, which
// the templates of bindata/metallb keep, so that docs, dashboards and existing
// installations line up (TestNamesAreTheTemplates holds the two together).
const (
	controllerName       = "controller" // the Deployment
	speakerName          = "speaker"    // the DaemonSet
	memberlistSecret     = "memberlist"
	webhookConfiguration = "metallb-webhook-configuration"
	webhookService       = "metallb-webhook-service"
	// bgpPeersCRD serves BGPPeers in two versions, which the controller
	// converts between behind webhookService.
	bgpPeersCRD = "bgppeers.metallb.io"
	// metricsPort serves both components' metrics.
	metricsPort = 9120

	// frr-k8s's, with the frr-k8s BGP backend; all its objects' names begin
	// with frrK8sPrefix.
	frrK8sPrefix               = "frr-k8s-"
	frrK8sName                 = frrK8sPrefix + "daemon"        // the DaemonSet
	frrK8sStatusCleaner        = frrK8sPrefix + "statuscleaner" // the Deployment, which serves its webhook
	frrK8sWebhookConfiguration = frrK8sPrefix + "validating-webhook-configuration"
)

// speakerPods selects the speakers' pods, as MetalLB's memberlist does
// (METALLB_ML_LABELS); frrK8sPods, those of frr-k8s's DaemonSet; nodePods,
// both, and MetalLB's controller.
var (
	speakerPods = labels.Set{"app": "metallb", "component": speakerName}
	frrK8sPods  = labels.Set{"app": "frr-k8s"}
	nodePods    = mustSelector("app in (metallb, frr-k8s)")
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

// ownership selects what the module owns: what it may prune.
var ownership = labels.Set{ManagedByLabel: ManagedBy, PartOfLabel: PartOf}

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

var (
	deploymentKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	daemonSetKind  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	namespaceKind  = corev1.SchemeGroupVersion.WithKind("Namespace")
	secretKind     = corev1.SchemeGroupVersion.WithKind("Secret")
	crdKind        = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	webhookKind    = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)
