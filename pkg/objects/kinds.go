package objects

import (
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The built-in kinds the operator's packages name, each once.
var (
	Namespace                      = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	Secret                         = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	Deployment                     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	DaemonSet                      = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	CustomResourceDefinition       = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	ValidatingWebhookConfiguration = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)

// OpenShift's config kinds the operator reads and writes.
var (
	ClusterOperator = configv1.GroupVersion.WithKind("ClusterOperator")
	Infrastructure  = configv1.GroupVersion.WithKind("Infrastructure")
)
