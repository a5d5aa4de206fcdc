package metallb

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// MetalLB's monitoring objects (its ServiceMonitors and PrometheusRule)
// follow prometheus-operator's CRDs, the module running all along: without
// them MetalLB runs, not Degraded, and the module keeps no cache for them;
// once they are created the objects appear within seconds, and one deleted
// comes back; when the CRDs go the cache goes, and when they come back so do
// the objects. Settled, a reconcile writes nothing.
func TestMonitoringObjectsFollowTheirCRDs(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	if err := m.client.Create(t.Context(), &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	m.waitSpeakerDaemonSet(t)
	m.waitDegraded(t, clusterObject, isFalse)
	if m.monitoringCached() {
		t.Fatal("a cache of the monitoring kinds exists while their CRDs do not")
	}

	crds := m.createMonitoringCRDs(t)
	m.waitMonitoringObjects(t, "the CRDs created", 10*time.Second)
	speaker := m.get(t, manifests.MonitoringKinds[0], manifests.DefaultNamespace, "speaker-monitor")
	if err := m.client.Delete(t.Context(), speaker); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted ServiceMonitor back", 10*time.Second, func(context.Context) (bool, error) {
		o := m.get(t, manifests.MonitoringKinds[0], manifests.DefaultNamespace, "speaker-monitor")
		return o != nil && o.GetUID() != speaker.GetUID(), nil
	})

	for _, crd := range crds {
		if err := m.client.Delete(t.Context(), crd); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the monitoring cache stopped once its CRDs are gone", 10*time.Second, func(context.Context) (bool, error) {
		return !m.monitoringCached(), nil
	})
	m.waitDegraded(t, clusterObject, isFalse)
	waitFor(t, "the CRDs gone", 30*time.Second, func(ctx context.Context) (bool, error) {
		return !slices.ContainsFunc(crds, func(crd *unstructured.Unstructured) bool { return m.crdExists(t, crd.GetName()) }), nil
	})
	m.createMonitoringCRDs(t)
	m.waitMonitoringObjects(t, "the CRDs created again", 10*time.Second)
	settle(t, m)
	m.assertWritesNothing(t, 20)
}

// createMonitoringCRDs creates prometheus-operator's CRDs.
func (m *moduleEnv) createMonitoringCRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	crds := testenv.MonitoringCRDs(t)
	for _, crd := range crds {
		if err := m.client.Create(t.Context(), crd.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	return crds
}

// monitoringObjects are the monitoring objects rendered with the native
// backend.
var monitoringObjects = []struct {
	gvk  schema.GroupVersionKind
	name string
}{{manifests.MonitoringKinds[0], "controller-monitor"}, {manifests.MonitoringKinds[0], "speaker-monitor"}, {manifests.MonitoringKinds[1], "metallb"}}

// waitMonitoringObjects waits for the controller's and the speakers'
// ServiceMonitors, and the PrometheusRule.
func (m *moduleEnv) waitMonitoringObjects(t *testing.T, after string, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	waitFor(t, "MetalLB's monitoring objects, "+after, timeout, func(context.Context) (bool, error) {
		for _, ref := range monitoringObjects {
			o := objects.Empty(ref.gvk)
			err := m.client.Get(t.Context(), client.ObjectKey{Namespace: manifests.DefaultNamespace, Name: ref.name}, o)
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) { // the test's client may not map the kind yet
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	})
	t.Logf("MetalLB's monitoring objects appeared %v after %s", time.Since(start).Round(time.Millisecond), after)
}

func (m *moduleEnv) crdExists(t *testing.T, name string) bool {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	err := m.client.Get(t.Context(), client.ObjectKey{Name: name}, crd)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// monitoringCached tells whether the module holds a cache of the monitoring
// kinds.
func (m *moduleEnv) monitoringCached() bool {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	return m.r.monitoring != nil
}
