package metallb

import (
	"context"
	"encoding/base64"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// BGPPeers convert through the controller's webhook once the controller is
// available, and with None before and after, the webhook stanza taken away
// first: each a row.
func TestConversionGate(t *testing.T) {
	webhookOff := func(o *Options) { o.Webhooks = false }
	for _, tc := range []struct {
		name    string
		opts    func(*Options)
		cluster func(*testing.T, Options) *Snapshot
		want    string // the strategy the CRD is applied with, "" if it is not applied
		off     bool   // the webhook stanza taken away first
	}{
		{"nothing configured: None", nil, empty, conversionNone, false},
		{"first activation, the controller not available yet: None", nil, with(empty, pool), conversionNone, false},
		{"the controller available: the webhook", nil, with(running("A"), conversionAs(conversionNone, false)), conversionWebhook, false},
		{"running with the webhook: nothing to write", nil, running("A"), "", false},
		{"the controller briefly unavailable: the webhook stays", nil, with(running("A"), controllerAt(1, 1, 0)), "", false},
		{"deactivation: None, the controller's CA bundle taken away first", nil, with(running("A"), withCABundle, unconfigured), conversionNone, true},
		{"webhooks off: None", webhookOff, running("A"), "", false},
		{"webhooks turned off while on: None, the stanza taken away first", webhookOff, with(running("A"), conversionAs(conversionWebhook, true)), conversionNone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := planOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			p := plan(tc.cluster(t, opts), opts, now)
			got := ""
			for _, o := range p.Apply {
				if o.GetKind() == crdKind.Kind && o.GetName() == bgpPeersCRD {
					got = conversionStrategy(o)
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
// without a webhook stanza.
func conversionAs(strategy string, webhook bool) func(*Snapshot) {
	return func(s *Snapshot) {
		crd := s.live(crdKind, bgpPeersCRD)
		setConversion([]*unstructured.Unstructured{crd}, webhook, DefaultNamespace)
		_ = unstructured.SetNestedField(crd.Object, strategy, "spec", "conversion", "strategy")
	}
}

// withCABundle has MetalLB's controller have injected its CA bundle.
func withCABundle(s *Snapshot) {
	_ = unstructured.SetNestedField(s.live(crdKind, bgpPeersCRD).Object, "Q0E=", "spec", "conversion", "webhook", "clientConfig", "caBundle")
}

func assertNoCABundle(t *testing.T, crd *unstructured.Unstructured) {
	t.Helper()
	if _, found, _ := unstructured.NestedFieldNoCopy(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle"); found {
		t.Error("the CRD is applied with a CA bundle: the controller's to inject")
	}
}

// Against a real control plane, with kwok playing MetalLB's pods: the BGPPeer
// CRD converts with None until the controller Deployment is available, with
// the webhook after, and with None again, the CA bundle the controller
// injected taken away, before the Deployment goes on deactivation. The
// operator never writes the CA bundle. (The test injects it as MetalLB's
// controller does, under its field manager; test/e2e's BGP stories run the
// real one.)
func TestConversionFollowsTheController(t *testing.T) {
	opts := testOptions()
	opts.Webhooks = true
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(1)}, opts)
	ctx := t.Context()
	seen := m.watchConversion(t)
	tuned := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: ObjectName}}
	if err := m.client.Create(ctx, tuned); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "BGPPeers converting through the webhook", time.Minute, func(context.Context) (bool, error) {
		return conversionStrategy(m.get(t, crdKind, "", bgpPeersCRD)) == conversionWebhook, nil
	})
	// A CA bundle, as MetalLB's controller injects its own: here the API server's.
	ca, err := os.ReadFile(m.Config.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	caBundle := []byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"` + base64.StdEncoding.EncodeToString(ca) + `"}}}}}`)
	if err := m.client.Patch(ctx, m.get(t, crdKind, "", bgpPeersCRD), client.RawPatch(types.MergePatchType, caBundle), client.FieldOwner("MetalLB")); err != nil {
		t.Fatal(err)
	}

	if err := m.client.Delete(ctx, tuned); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller Deployment deleted", time.Minute, func(context.Context) (bool, error) {
		return m.get(t, deploymentGVK, DefaultNamespace, controllerName) == nil, nil
	})
	crd := m.get(t, crdKind, "", bgpPeersCRD)
	if conversionStrategy(crd) != conversionNone || hasConversionWebhook(crd) {
		t.Errorf("after deactivation BGPPeers convert as %v", crd.Object["spec"].(map[string]any)["conversion"])
	}
	changes := seen()
	for _, s := range changes {
		if s.strategy == conversionWebhook && !s.controllerAvailable {
			t.Errorf("BGPPeers converted through the webhook while the controller was not available (%+v)", s)
		}
	}
	if len(changes) < 3 || changes[0].strategy != conversionNone || changes[1].strategy != conversionWebhook {
		t.Errorf("BGPPeers converted as %+v: want None, then the webhook once the controller was available, then None", changes)
	}
	assertNeverWroteCABundle(t, crd)
}

// conversionSeen is the BGPPeer CRD's conversion strategy as a watch saw it
// change, and whether the controller Deployment was available when it did:
// read after the change, it shows what the module saw or later.
type conversionSeen struct {
	strategy            string
	controllerAvailable bool
}

// watchConversion records each change of the BGPPeer CRD's conversion
// strategy until the test ends; the function it returns tells them so far.
func (m *moduleEnv) watchConversion(t *testing.T) func() []conversionSeen {
	t.Helper()
	c, err := clientWithWatch(m.Env)
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(crdKind.GroupVersion().WithKind("CustomResourceDefinitionList"))
	w, err := c.Watch(t.Context(), list, client.MatchingFields{"metadata.name": bgpPeersCRD})
	if err != nil {
		t.Fatal(err)
	}
	var seen []conversionSeen
	var mu sync.Mutex
	go func() {
		for e := range w.ResultChan() {
			crd, ok := e.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			strategy := conversionStrategy(crd)
			mu.Lock()
			if n := len(seen); n == 0 || seen[n-1].strategy != strategy {
				seen = append(seen, conversionSeen{strategy, m.controllerAvailable()})
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return func() []conversionSeen {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func (m *moduleEnv) controllerAvailable() bool {
	d := &appsv1.Deployment{}
	err := m.client.Get(context.Background(), client.ObjectKey{Namespace: DefaultNamespace, Name: controllerName}, d)
	return err == nil && d.Status.AvailableReplicas > 0
}

// assertNeverWroteCABundle checks that no field manager of the operator's
// owns the CRD's CA bundle.
func assertNeverWroteCABundle(t *testing.T, crd *unstructured.Unstructured) {
	t.Helper()
	for _, f := range crd.GetManagedFields() {
		if strings.HasPrefix(f.Manager, FieldOwner) && f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), "caBundle") {
			t.Errorf("%s owns the CA bundle: %s", f.Manager, f.FieldsV1.Raw)
		}
	}
}
