package metallb

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// The TLS profile, the module running all along: on a cluster with
// OpenShift's APIServer API (its real CRD), the cluster's profile is given to
// MetalLB's pods (their --tls-* flags) and to the operator's own endpoints;
// a change of it reaches both; the MetalLB object's profile overrides it;
// and a wrong one is refused, naming the field, with what runs and what the
// operator serves left as they were.
func TestTLSProfileFollowsTheClusterAndTheMetalLBObject(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{})
	crd := testenv.Decode(t, testenv.APIServerCRD)
	if err := m.client.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	m.waitEstablished(t, crd.GetName())
	apiServer := &unstructured.Unstructured{}
	apiServer.SetGroupVersionKind(objects.APIServer)
	apiServer.SetName(objects.ClusterConfigName)
	_ = unstructured.SetNestedField(apiServer.Object, "Old", "spec", "tlsSecurityProfile", "type")
	// The client's discovery may not know the kind yet: created once it does.
	waitFor(t, "APIServer/cluster created", 30*time.Second, func(ctx context.Context) (bool, error) {
		err := m.client.Create(ctx, apiServer)
		return err == nil, ignoreNoMatch(err)
	})
	m.run(t, testOptions())
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitTLS(t, "the cluster's Old", "VersionTLS10", true)

	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"tlsSecurityProfile":{"type":"Modern"}}}`))
	if err := m.client.Patch(t.Context(), apiServer, patch); err != nil {
		t.Fatal(err)
	}
	m.waitTLS(t, "the cluster's Modern", "VersionTLS13", false)

	obj := &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}
	obj.Spec.TLSSecurityProfile = &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType}
	if err := m.client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	m.waitTLS(t, "the MetalLB object's Intermediate", "VersionTLS12", true)

	custom := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"tlsSecurityProfile":{"type":"Custom"}}}`))
	if err := m.client.Patch(t.Context(), obj, custom); err != nil {
		t.Fatal(err)
	}
	c := m.waitDegraded(t, clusterObject, isTrue)
	if !strings.Contains(c.Message, "spec.tlsSecurityProfile.custom: Required value") {
		t.Errorf("Degraded says %q; want it to name spec.tlsSecurityProfile.custom", c.Message)
	}
	m.waitTLS(t, "a wrong profile refused", "VersionTLS12", true)
}

// waitEstablished waits until a CRD's API is served.
func (m *moduleEnv) waitEstablished(t *testing.T, name string) {
	t.Helper()
	waitFor(t, name+" established", 30*time.Second, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established), nil
	})
}

// waitTLS waits until the speakers' DaemonSet gives them minVersion, with
// cipher suites or not, and the operator's endpoints serve the same.
func (m *moduleEnv) waitTLS(t *testing.T, what, minVersion string, ciphers bool) {
	t.Helper()
	matches := func() bool {
		ds := m.get(t, objects.DaemonSet, manifests.DefaultNamespace, "speaker")
		if ds == nil {
			return false
		}
		containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		hasCiphers := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--tls-cipher-suites=") })
		served, ok := m.serving.Current()
		return slices.Contains(args, "--tls-min-version="+minVersion) && hasCiphers == ciphers &&
			ok && served.MinVersion == minVersion && (len(served.CipherSuites) > 0) == ciphers
	}
	waitFor(t, what, 20*time.Second, func(context.Context) (bool, error) { return matches(), nil })
}
