package plan

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// BGPPeers convert through the controller's webhook once the controller
// Deployment exists, and with None before and after, the webhook stanza taken
// away first: each a row.
func TestConversionGate(t *testing.T) {
	webhookOff := func(o *Options) { o.Webhooks = false }
	for _, tc := range []struct {
		name    string
		opts    func(*Options)
		cluster func(*testing.T, Options) *Snapshot
		want    string // the strategy the CRD is applied with, "" if it is not applied
		off     bool   // the webhook stanza taken away first
	}{
		{"nothing configured: None", nil, empty, manifests.ConversionNone, false},
		{"first activation, no controller yet: None", nil, with(empty, pool), manifests.ConversionNone, false},
		{"the controller deployed, not available yet: the webhook, where its server waits for its CA", nil, with(running("A"), conversionAs(manifests.ConversionNone, false), controllerAt(1, 1, 0)), manifests.ConversionWebhook, false},
		{"the controller available: the webhook", nil, with(running("A"), conversionAs(manifests.ConversionNone, false)), manifests.ConversionWebhook, false},
		{"running with the webhook: nothing to write", nil, running("A"), "", false},
		{"the controller briefly unavailable: the webhook stays", nil, with(running("A"), controllerAt(1, 1, 0)), "", false},
		{"deactivation: None, the controller's CA bundle taken away first", nil, with(running("A"), withCABundle, unconfigured), manifests.ConversionNone, true},
		{"webhooks off: None", webhookOff, running("A"), "", false},
		{"webhooks turned off while on: None, the stanza taken away first", webhookOff, with(running("A"), conversionAs(manifests.ConversionWebhook, true)), manifests.ConversionNone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := planOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			p := Make(tc.cluster(t, opts), opts, now)
			got := ""
			for _, o := range p.Apply {
				if o.GetKind() == objects.CustomResourceDefinition.Kind && o.GetName() == manifests.BGPPeersCRD {
					got = manifests.ConversionStrategy(o)
					assertNoCABundle(t, o)
				}
			}
			if got != tc.want || (p.ConversionOff != nil) != tc.off {
				t.Errorf("the CRD applied with conversion %q, its webhook taken away first %v; want %q, %v", got, p.ConversionOff != nil, tc.want, tc.off)
			}
		})
	}
}

// conversionAs has the live BGPPeer CRD convert with a strategy, with or
// without the webhook stanza MetalLB's manifest gives it.
func conversionAs(strategy string, webhook bool) func(*Snapshot) {
	return func(s *Snapshot) {
		opts := planOptions()
		opts.Webhooks = webhook
		objs, err := manifests.Render(manifests.Settings{Environment: opts.Environment}, "")
		if err != nil {
			panic(err)
		}
		i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetName() == manifests.BGPPeersCRD })
		conversion, _, _ := unstructured.NestedMap(objs[i].Object, "spec", "conversion")
		conversion["strategy"] = strategy
		_ = unstructured.SetNestedMap(s.live(objects.CustomResourceDefinition, manifests.BGPPeersCRD).Object, conversion, "spec", "conversion")
	}
}

// withCABundle has MetalLB's controller have injected its CA bundle.
func withCABundle(s *Snapshot) {
	_ = unstructured.SetNestedField(s.live(objects.CustomResourceDefinition, manifests.BGPPeersCRD).Object, "Q0E=", "spec", "conversion", "webhook", "clientConfig", "caBundle")
}

func assertNoCABundle(t *testing.T, crd *unstructured.Unstructured) {
	t.Helper()
	if _, found, _ := unstructured.NestedFieldNoCopy(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle"); found {
		t.Error("the CRD is applied with a CA bundle: the controller's to inject")
	}
}
