package metallb

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Conversion strategies of a CRD.
const (
	conversionNone    = "None"
	conversionWebhook = "Webhook"
)

// conversionPath is where MetalLB's controller serves conversion reviews.
const conversionPath = "/convert"

// setConversion gives the BGPPeer CRD among objs its conversion: through the
// controller's webhook, as upstream's native manifest has it (the CRDs of
// MetalLB's config/crd/bases, which bindata copies, lack it), or None. The
// CA bundle is the controller's to inject: the operator never sets it.
func setConversion(objs []*unstructured.Unstructured, webhook bool, namespace string) {
	for _, o := range objs {
		if o.GetKind() != crdKind.Kind || o.GetName() != bgpPeersCRD {
			continue
		}
		conversion := map[string]any{"strategy": conversionNone}
		if webhook {
			conversion = map[string]any{"strategy": conversionWebhook, "webhook": map[string]any{
				"clientConfig": map[string]any{"service": map[string]any{
					"name": webhookService, "namespace": namespace, "path": conversionPath,
				}},
				"conversionReviewVersions": []any{"v1beta1", "v1beta2"},
			}}
		}
		o.Object["spec"].(map[string]any)["conversion"] = conversion
	}
}

// gateConversion has BGPPeers convert through the controller's webhook only
// once the controller, which serves it, is first available, as the webhook
// configuration; until then, and when MetalLB is not configured, they
// convert with None, so that reading BGPPeers never waits on a webhook
// nobody serves. Once on, the webhook stays while the controller is briefly
// unavailable (a drain, a rollout). Turning it off from a CRD whose webhook
// stanza holds the controller's CA bundle takes that stanza away first
// (ConversionOff): with None the API server refuses any stanza left.
func (p *Plan) gateConversion(s *Snapshot, settings Settings, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	live := s.owned(crdKind, "", bgpPeersCRD)
	on := p.found.active && settings.Webhooks && (available(s, settings.Namespace, controllerName) || conversionStrategy(live) == conversionWebhook)
	out := make([]*unstructured.Unstructured, len(want))
	for i, o := range want {
		out[i] = o
		if on || o.GetKind() != crdKind.Kind || o.GetName() != bgpPeersCRD || conversionStrategy(o) == conversionNone {
			continue
		}
		out[i] = o.DeepCopy()
		setConversion(out[i:i+1], false, settings.Namespace)
	}
	if !on && live != nil && hasConversionWebhook(live) {
		p.ConversionOff = live
	}
	return out
}

func conversionStrategy(crd *unstructured.Unstructured) string {
	if crd == nil {
		return ""
	}
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	return strategy
}

func hasConversionWebhook(crd *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook")
	return found
}
