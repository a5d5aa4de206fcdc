package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// kubeProxyIPVS is kube-proxy's configuration as kubeadm writes it, in IPVS
// mode, strictARP as given.
func kubeProxyIPVS(strict bool) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: kube-proxy, namespace: kube-system}
data:
  config.conf: |
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    mode: ipvs
    ipvs:
      strictARP: %t
`, strict)
}

// What breaks MetalLB silently from outside its configuration, against the
// real API server and MetalLB: none on a healthy cluster; kube-proxy in IPVS
// mode without strictARP, a pool holding a node's address and the Service
// network, every node excluded from load balancers: each an Event on its
// object and a sentence of the MetalLB object's Degraded=False message, and
// a line of kubectl metallb status; each gone once fixed.
func TestPreflightFindings(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, _ := newConfiguredCluster(t)
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, "apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata: {name: metallb, namespace: metallb-system}\n"))
	c.waitConfiguredAsIs(t)

	kubectl(t, c.Env, "apply", "-f", writeTemp(t, kubeProxyIPVS(false)))
	c.applyOnceServed(t, writeTemp(t, fmt.Sprintf(`apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: overlap, namespace: metallb-system}
spec: {addresses: [%s/32, 10.0.0.0/28], autoAssign: false}
`, c.Nodes[1].InternalIP)))
	told := map[string]string{
		"StrictARPOff":               "kube-proxy runs in IPVS mode without strictARP (ConfigMap kube-system/kube-proxy, config.conf)",
		"PoolHoldsNodeAddress":       fmt.Sprintf("IPAddressPool metallb-system/overlap holds %s of node %s", c.Nodes[1].InternalIP, c.Nodes[1].Name),
		"PoolOverlapsServiceNetwork": "IPAddressPool metallb-system/overlap overlaps the cluster's Service network 10.0.0.0/24 (ServiceCIDR kubernetes)",
	}
	c.waitTold(t, told)
	pluginSays(t, c.Env, "", "preflight-status", "PoolOverlapsServiceNetwork", "status")

	for _, n := range c.Nodes {
		kubectl(t, c.Env, "label", "node", n.Name, corev1.LabelNodeExcludeBalancers+"=")
	}
	c.waitTold(t, map[string]string{"AllNodesExcluded": "Every node (3) carries the label node.kubernetes.io/exclude-from-external-load-balancers"})

	kubectl(t, c.Env, "apply", "-f", writeTemp(t, kubeProxyIPVS(true)))
	kubectl(t, c.Env, "delete", "ipaddresspool", "overlap", "-n", metallbNamespace)
	for _, n := range c.Nodes {
		kubectl(t, c.Env, "label", "node", n.Name, corev1.LabelNodeExcludeBalancers+"-")
	}
	c.waitConfiguredAsIs(t)
}

// waitTold waits for an Event of each reason that says what it is to, and
// for the MetalLB object's Degraded=False message to say it too.
func (c *metallbCluster) waitTold(t *testing.T, told map[string]string) {
	t.Helper()
	var all []string
	for reason, want := range told {
		if note := strings.Join(waitEventNotes(t, c.Env, reason), "\n"); !strings.Contains(note, want) {
			t.Errorf("the %s Event says %q, not %q", reason, note, want)
		}
		all = append(all, want)
	}
	c.waitMetalLBMessage(t, "Degraded", "False", all...)
}

// waitConfiguredAsIs waits until the MetalLB object says MetalLB runs as
// configured, and nothing else.
func (c *metallbCluster) waitConfiguredAsIs(t *testing.T) {
	t.Helper()
	want := "False MetalLB runs as configured."
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		mlb, _ := dynamicClient(t, c.Env).Resource(metallbs).Namespace(metallbNamespace).Get(ctx, "metallb", metav1.GetOptions{})
		cond := condition(mlb, "Degraded")
		got = fmt.Sprint(cond["status"], " ", cond["message"])
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("the MetalLB object's Degraded is %q, want %q", got, want)
	}
}
