package manifests

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Conversion strategies of a CRD.
const (
	ConversionNone    = "None"
	ConversionWebhook = "Webhook"
)

// conversionPath is where MetalLB's controller serves conversion reviews.
const conversionPath = "/convert"

// setConversion gives the BGPPeer CRD among objs its conversion: through the
// controller's webhook, as upstream's native manifest has it (the CRDs of
// MetalLB's config/crd/bases, which bindata copies, lack it), or None. The
// CA bundle is the controller's to inject: the operator never sets it.
func setConversion(objs []*unstructured.Unstructured, webhook bool, namespace string) {
	for _, o := range objs {
		if o.GetKind() != objects.CustomResourceDefinition.Kind || o.GetName() != BGPPeersCRD {
			continue
		}
		conversion := map[string]any{"strategy": ConversionNone}
		if webhook {
			conversion = map[string]any{"strategy": ConversionWebhook, "webhook": map[string]any{
				"clientConfig": map[string]any{"service": map[string]any{
					"name": WebhookService, "namespace": namespace, "path": conversionPath,
				}},
				"conversionReviewVersions": []any{"v1beta1", "v1beta2"},
			}}
		}
		o.Object["spec"].(map[string]any)["conversion"] = conversion
	}
}

// WithoutConversionWebhook returns a copy of the BGPPeer CRD that converts
// with None.
func WithoutConversionWebhook(crd *unstructured.Unstructured) *unstructured.Unstructured {
	out := crd.DeepCopy()
	setConversion([]*unstructured.Unstructured{out}, false, "")
	return out
}

// ConversionStrategy returns a CRD's conversion strategy, "" for none or no CRD.
func ConversionStrategy(crd *unstructured.Unstructured) string {
	if crd == nil {
		return ""
	}
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	return strategy
}

// HasConversionWebhook tells whether a CRD has a conversion webhook stanza.
func HasConversionWebhook(crd *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook")
	return found
}
