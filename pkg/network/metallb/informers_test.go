package metallb

import (
	"context"
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// lazyWatches are watches of the rendered kinds beyond the Foundation's, of
// what the checks read whole, and of the findings' Events and Service
// networks, as the module opens them.
var lazyWatches = []string{
	"namespaces/" + manifests.DefaultNamespace + "/deployments", "namespaces/" + manifests.DefaultNamespace + "/serviceaccounts",
	"namespaces/" + manifests.DefaultNamespace + "/secrets", "namespaces/" + manifests.DefaultNamespace + "/secrets (metadata)",
	"daemonsets (metadata)", "clusterroles", "clusterroles (metadata)", "validatingwebhookconfigurations",
	"ipaddresspools", "configurationstates", "events", "namespaces/" + manifests.DefaultNamespace + "/events", "servicecidrs",
}

// Before anything asks for MetalLB, the module watches the objects of its
// namespace and CRDs only (plan.Foundation): the informers of the other
// kinds would cost memory on every cluster that never asks for MetalLB. A
// pool starts them, and MetalLB is deployed. A module started again after
// MetalLB's last pool went while it was down starts them too, told by the
// memberlist Secret that MetalLB was deployed, and removes what was left.
func TestInformersOfEveryKindStartWithMetalLB(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{ControllerManager: true}, testOptions())
	m.waitCRDs(t)
	m.assertAbsent(t, "Deployment/controller")
	watches := m.watchCounts()
	for _, w := range lazyWatches {
		if watches[w] != 0 {
			t.Errorf("%d watches of %s before MetalLB was asked for", watches[w], w)
		}
	}
	for _, w := range []string{"namespaces", "namespaces (metadata)", "customresourcedefinitions", "customresourcedefinitions (metadata)"} {
		if watches[w] == 0 {
			t.Errorf("no watch of %s: the Foundation's kinds are not followed; watches: %v", w, watches)
		}
	}

	pool := m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitSpeakerDaemonSet(t)
	watches = m.watchCounts()
	for _, w := range lazyWatches {
		if watches[w] == 0 {
			t.Errorf("no watch of %s once MetalLB is deployed; watches: %v", w, watches)
		}
	}

	m.stop()
	if err := m.client.Delete(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	m.run(t, testOptions())
	waitFor(t, "what MetalLB left removed", 30*time.Second, func(ctx context.Context) (bool, error) {
		return m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.ControllerName) == nil &&
			m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName) == nil, nil
	})
}
