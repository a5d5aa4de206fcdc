package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// On OpenShift, whose network operator runs frr-k8s where its Network object
// asks for it: the frr-k8s backend chosen while FRR is off is refused, naming
// the field and the command that turns it on, and nothing of MetalLB's
// workloads is deployed; once the Network object lists FRR (no restart), the
// speakers use the platform's frr-k8s (FRRK8S_NAMESPACE) and the module
// runs no frr-k8s of its own. A pool overlapping the pod network that
// object names is a finding.
func TestFRRK8sBackendUsesOpenShiftsFRRK8s(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(2)})
	crd := testenv.Decode(t, testenv.NetworkCRD)
	if err := m.client.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	m.waitEstablished(t, crd.GetName())
	network := objects.Empty(objects.Network)
	network.SetName(objects.ClusterConfigName)
	// The client's discovery may not know the kind yet: created once it does.
	waitFor(t, "Network/cluster created", 30*time.Second, func(ctx context.Context) (bool, error) {
		err := m.client.Create(ctx, network)
		return err == nil, ignoreNoMatch(err)
	})
	m.run(t, testOptions())
	m.waitCRDs(t)
	m.activate(t, v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s})
	c := m.waitDegradedWithin(t, clusterObject, 10*time.Second, func(c metav1.Condition) bool {
		return c.Reason == plan.ReasonInvalidConfiguration && strings.Contains(c.Message, "spec.bgpBackend")
	})
	if !strings.Contains(c.Message, manifests.EnableFRRCommand) {
		t.Errorf("Degraded does not say how to turn on OpenShift's frr-k8s: %q", c.Message)
	}

	if err := unstructured.SetNestedStringSlice(network.Object, []string{"FRR"}, "spec", "additionalRoutingCapabilities", "providers"); err != nil {
		t.Fatal(err)
	}
	// Its pod network, where OpenShift's nodes have no spec.podCIDRs, holds
	// the pool's addresses: a finding.
	network.Object["spec"].(map[string]any)["clusterNetwork"] = []any{map[string]any{"cidr": "192.0.2.96/27", "hostPrefix": int64(28)}}
	if err := m.client.Update(t.Context(), network); err != nil {
		t.Fatal(err)
	}
	m.waitStatus(t, testOptions().Images.ReleaseVersion, 2*time.Minute)
	m.waitDegradedWithin(t, clusterObject, 10*time.Second, func(c metav1.Condition) bool {
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message,
			"IPAddressPool metallb-system/pool1 overlaps the pod network 192.0.2.96/27 (Network.operator.openshift.io cluster, spec.clusterNetwork)")
	})
	env := containerEnv(t, m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.SpeakerName))
	if env["FRRK8S_NAMESPACE"] != manifests.OpenShiftFRRK8sNamespace || env[manifests.BGPTypeEnv] != "frr-k8s" {
		t.Errorf("the speakers do not use the frr-k8s in %s: environment %v", manifests.OpenShiftFRRK8sNamespace, env)
	}
	m.assertNoFRRK8s(t)
}

// assertNoFRRK8s checks that the module runs no frr-k8s of its own: it
// would be a second FRR on every node.
func (m *moduleEnv) assertNoFRRK8s(t *testing.T) {
	t.Helper()
	if m.get(t, objects.DaemonSet, manifests.DefaultNamespace, manifests.FRRK8sName) != nil ||
		m.get(t, objects.Deployment, manifests.DefaultNamespace, manifests.FRRK8sStatusCleaner) != nil {
		t.Errorf("frr-k8s's workloads run in %s beside the platform's", manifests.DefaultNamespace)
	}
}
