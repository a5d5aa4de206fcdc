package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// webhookServers are the Deployments that serve the webhook configurations.
var webhookServers = map[string]string{
	manifests.WebhookConfiguration:       manifests.ControllerName,
	manifests.FRRK8sWebhookConfiguration: manifests.FRRK8sStatusCleaner,
}

// gateWebhooks withholds each webhook configuration until the Deployment that
// serves it (MetalLB's controller, frr-k8s's status cleaner) is first
// available: with failure policy Fail, the configuration would otherwise
// refuse every object it checks. Once applied it stays while its server is
// briefly unavailable (a drain, a rollout): removing it would drop
// validation, and the CA bundle the server wrote. MetalLB's controller is
// ready before its webhook server listens; gateConversion lets that server
// start early enough that it listens by then.
func (p *Plan) gateWebhooks(s *Snapshot, settings manifests.Settings, desired []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range desired {
		server := webhookServers[o.GetName()]
		if o.GroupVersionKind() != objects.ValidatingWebhookConfiguration || serving(s, settings.Namespace, server) || s.Owned[objects.KeyOf(o)] != nil {
			out = append(out, o)
			continue
		}
		p.Withheld = append(p.Withheld, Held{o, fmt.Sprintf("Deployment %s, which serves the webhooks, is not available yet", server)})
	}
	return out
}

// gateConversion has BGPPeers convert through the controller's webhook once
// the controller Deployment exists, and with None before, and when MetalLB is
// not configured, so that reading BGPPeers never waits on a webhook nobody
// will serve. Not later: the controller's certificate rotator starts its
// webhook server only once it has injected its CA bundle into this stanza,
// and it looks for the stanza on a back-off that doubles from a second; the
// controller is available (its readiness is a ping) before, so waiting for
// that held the server back by a step of that back-off, seconds during which
// the webhook configuration, applied on availability, refused every
// metallb.io write and reads of BGPPeers failed. Once on, the webhook stays
// while the controller is briefly unavailable (a drain, a rollout). Turning it
// off from a CRD whose webhook stanza holds the controller's CA bundle takes
// that stanza away first (ConversionOff): with None the API server refuses any
// stanza left.
func (p *Plan) gateConversion(s *Snapshot, settings manifests.Settings, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	live := s.OwnedObject(objects.CustomResourceDefinition, "", manifests.BGPPeersCRD)
	deployed := s.OwnedObject(objects.Deployment, settings.Namespace, manifests.ControllerName) != nil
	on := p.configured && settings.Webhooks && (deployed || manifests.ConversionStrategy(live) == manifests.ConversionWebhook)
	out := make([]*unstructured.Unstructured, len(want))
	for i, o := range want {
		out[i] = o
		if !on && o.GetKind() == objects.CustomResourceDefinition.Kind && o.GetName() == manifests.BGPPeersCRD &&
			manifests.ConversionStrategy(o) != manifests.ConversionNone {
			out[i] = manifests.WithoutConversionWebhook(o)
		}
	}
	if !on && live != nil && manifests.HasConversionWebhook(live) {
		p.ConversionOff = new(objects.RefOf(live))
	}
	return out
}

// serving tells whether an owned Deployment has an available pod of its
// current template: it serves what it serves.
func serving(s *Snapshot, namespace, deployment string) bool {
	d := s.OwnedObject(objects.Deployment, namespace, deployment)
	if d == nil {
		return false
	}
	c := status.RolloutOf(d, manifests.ReleaseVersionAnnotation)
	return c.Observed && c.Available > 0 && c.Updated > 0
}
