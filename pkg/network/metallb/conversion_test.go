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
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Against a real control plane, with kwok playing MetalLB's pods: the BGPPeer
// CRD converts with None until the controller Deployment exists, with the
// webhook after, and with None again, the CA bundle the controller
// injected taken away, before the Deployment goes on deactivation. The
// operator never writes the CA bundle. (The test injects it as MetalLB's
// controller does, under its field manager; test/e2e's BGP stories run the
// real one.)
func TestConversionFollowsTheController(t *testing.T) {
	t.Parallel()
	opts := testOptions()
	opts.Webhooks = true
	m := startModule(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(1)}, opts)
	ctx := t.Context()
	seen := m.watchConversion(t)
	tuned := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}
	if err := m.client.Create(ctx, tuned); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "BGPPeers converting through the webhook", time.Minute, func(context.Context) (bool, error) {
		return manifests.ConversionStrategy(m.get(t, objects.CustomResourceDefinition, "", manifests.BGPPeersCRD)) == manifests.ConversionWebhook, nil
	})
	// A CA bundle, as MetalLB's controller injects its own: here the API server's.
	ca, err := os.ReadFile(m.Config.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	caBundle := []byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"` + base64.StdEncoding.EncodeToString(ca) + `"}}}}}`)
	if err := m.client.Patch(ctx, m.get(t, objects.CustomResourceDefinition, "", manifests.BGPPeersCRD), client.RawPatch(types.MergePatchType, caBundle), client.FieldOwner("MetalLB")); err != nil {
		t.Fatal(err)
	}

	if err := m.client.Delete(ctx, tuned); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller Deployment deleted", time.Minute, func(context.Context) (bool, error) {
		return m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName) == nil, nil
	})
	crd := m.get(t, objects.CustomResourceDefinition, "", manifests.BGPPeersCRD)
	if manifests.ConversionStrategy(crd) != manifests.ConversionNone || manifests.HasConversionWebhook(crd) {
		t.Errorf("after deactivation BGPPeers convert as %v", crd.Object["spec"].(map[string]any)["conversion"])
	}
	changes := seen()
	for _, s := range changes {
		if s.strategy == manifests.ConversionWebhook && !s.controllerDeployed {
			t.Errorf("BGPPeers converted through the webhook while no controller Deployment existed (%+v)", s)
		}
	}
	if len(changes) < 3 || changes[0].strategy != manifests.ConversionNone || changes[1].strategy != manifests.ConversionWebhook {
		t.Errorf("BGPPeers converted as %+v: want None, then the webhook once the controller Deployment existed, then None", changes)
	}
	assertNeverWroteCABundle(t, crd)
}

// conversionSeen is the BGPPeer CRD's conversion strategy as a watch saw it
// change, and whether the controller Deployment existed when it did: read
// after the change, it shows what the module saw or later.
type conversionSeen struct {
	strategy           string
	controllerDeployed bool
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
	list.SetGroupVersionKind(objects.CustomResourceDefinition.GroupVersion().WithKind("CustomResourceDefinitionList"))
	w, err := c.Watch(t.Context(), list, client.MatchingFields{"metadata.name": manifests.BGPPeersCRD})
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
			strategy := manifests.ConversionStrategy(crd)
			mu.Lock()
			if n := len(seen); n == 0 || seen[n-1].strategy != strategy {
				seen = append(seen, conversionSeen{strategy, m.controllerDeployed()})
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

func (m *moduleEnv) controllerDeployed() bool {
	err := m.client.Get(context.Background(), client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: manifests.ControllerName}, &appsv1.Deployment{})
	return err == nil
}

// assertNeverWroteCABundle checks that no field manager of the operator's
// owns the CRD's CA bundle.
func assertNeverWroteCABundle(t *testing.T, crd *unstructured.Unstructured) {
	t.Helper()
	for _, f := range crd.GetManagedFields() {
		if strings.HasPrefix(f.Manager, manifests.FieldOwner) && f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), "caBundle") {
			t.Errorf("%s owns the CA bundle: %s", f.Manager, f.FieldsV1.Raw)
		}
	}
}
