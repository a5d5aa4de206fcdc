package objects

import (
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The built-in kinds the operator's packages name, each once.
var (
	Namespace                      = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	Secret                         = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	ConfigMap                      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	Pod                            = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	ServiceCIDR                    = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "ServiceCIDR"}
	Deployment                     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	DaemonSet                      = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	CustomResourceDefinition       = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	ValidatingWebhookConfiguration = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
	NetworkPolicy                  = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}
)

// IsDefaultDeny tells whether an object is a NetworkPolicy that selects every
// pod of its namespace (an empty podSelector): it isolates them all, and
// allows only what the other policies there allow. It is written after them,
// and deleted before them, so that no pod is ever isolated without its
// allow-list.
func IsDefaultDeny(o *unstructured.Unstructured) bool {
	if o.GroupVersionKind().GroupKind() != NetworkPolicy.GroupKind() {
		return false
	}
	selector, found, _ := unstructured.NestedMap(o.Object, "spec", "podSelector")
	return found && len(selector) == 0
}

// OpenShift's config kinds the operator reads and writes.
var (
	ClusterOperator = configv1.GroupVersion.WithKind("ClusterOperator")
	Infrastructure  = configv1.GroupVersion.WithKind("Infrastructure")
	APIServer       = configv1.GroupVersion.WithKind("APIServer")
)

// SecurityContextConstraints is the kind OpenShift admits pods by: where it is
// served, a pod runs only under an SCC its service account may use.
var SecurityContextConstraints = schema.GroupVersionKind{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints"}

// ServingCertSecretAnnotation asks OpenShift's service CA, on a Service, for a
// certificate for the Service's DNS names, written into the Secret it names.
const ServingCertSecretAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

// Network is OpenShift's network operator configuration; its one object,
// "cluster", says whether that operator runs frr-k8s.
var Network = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Network"}

// ClusterConfigName names each of OpenShift's cluster-wide configuration
// objects (Infrastructure, APIServer): there is one of each, "cluster".
const ClusterConfigName = "cluster"
