package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The user guide's maintenance example names, as kured's recipe, the label
// a tool sets to one value on a node before it takes it down
// (maintenanceOn), and to another once it is back (maintenanceOff).
const (
	maintenanceOn  = "example.com/rebooting=true"
	maintenanceOff = "example.com/rebooting=false"
)

// maintenanceGapBound is the bound on the longest gap in answers while
// a node's announcements leave it and it is then killed.
const maintenanceGapBound = 300 * time.Millisecond

// Node maintenance with the real MetalLB in layer 2, the operator running as
// its service account under the shipped RBAC and node policy, its MetalLB
// object the user guide's maintenance example (a label signal, kured's way). The node answering for a dual-stack
// Service's addresses enters maintenance: both addresses move to another node
// with no gap in answers over maintenanceGapBound, and killing the node hard
// afterwards leaves none either; once it is back, and its signal gone, it
// announces again. The same kill without maintenance leaves a gap longer than
// the bound (the failure detection's): what maintenance saves. Then what the user owns: a cordon alone changes nothing, a
// node the user labelled is never unlabelled, the last node that could
// announce is held (a condition and an Event say so) through a restart of
// the operator, and deactivation takes off every label the operator put and
// no other.
func TestMaintenance(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t)
	kubectl(t, c.Env, "apply", "-k", manifestsDir)
	kubeconfig := c.serviceAccountKubeconfig(t)
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+kubeconfig)
	op.waitReady(t)
	c.configureDualStack(t)
	c.nameMaintenanceLabel(t)
	ips := c.expose(t, "web-dual", corev1.IPv4Protocol, corev1.IPv6Protocol)
	t.Run("layer 2", func(t *testing.T) { c.maintainAnswerer(t, ips) })
	t.Run("what the user owns", func(t *testing.T) {
		op = c.maintainWhatTheUserOwns(t, op, kubeconfig)
	})
}

// maintainAnswerer takes the node answering for the addresses down for
// maintenance, kills it, brings it back and ends its maintenance.
func (c *metallbCluster) maintainAnswerer(t *testing.T, ips []net.IP) {
	node := c.settledAnswerer(t, ips)
	watches := make([]*answerWatch, len(ips))
	for i, ip := range ips {
		watches[i] = c.watchAnswers(t, ip)
		c.waitAnswer(t, watches[i], func(a answer) bool { return a.node == node }, 10*time.Second, "%s answering for %s", node, ip)
	}
	entered := time.Now()
	kubectl(t, c.Env, "label", "--overwrite", "node", node, maintenanceOn)
	for i, ip := range ips {
		a := c.waitAnswer(t, watches[i], func(a answer) bool { return a.at.After(entered) && a.node != "" && a.node != node },
			30*time.Second, "another node answering for %s after %s entered maintenance", ip, node)
		t.Logf("MAINTENANCE %s: %s answered %s after %s entered maintenance", family(ip), a.node, a.at.Sub(entered).Round(time.Millisecond), node)
	}
	c.waitMaintained(t, node, "it carries the label "+maintenanceOn)
	speaker := c.speakerPods(t)[node]
	killed := time.Now()
	c.Runner.StopNode(node, syscall.SIGKILL)
	for i, w := range watches {
		// Answers sampled for 3 s after the kill: longer than the Fast
		// profile's hard failover, which a node still announcing would show.
		c.waitAnswer(t, w, func(a answer) bool { return a.at.After(killed.Add(3 * time.Second)) }, 30*time.Second,
			"answers for %s 3 s after %s was killed", ips[i], node)
		w.end()
		gap, at := w.longestGap()
		t.Logf("MAINTENANCE %s: longest gap in answers %s, %s after the node entered maintenance (killed %s after)",
			family(ips[i]), gap.Round(time.Millisecond), at.Sub(entered).Round(time.Millisecond), killed.Sub(entered).Round(time.Millisecond))
		if gap > maintenanceGapBound {
			t.Errorf("%s went unanswered for %s while %s entered maintenance and was killed; at most %s is allowed", ips[i], gap, node, maintenanceGapBound)
		}
	}
	c.restartNode(t, node, speaker)
	kubectl(t, c.Env, "label", "--overwrite", "node", node, maintenanceOff)
	c.waitMaintained(t, node, "")
	c.waitNodeEvent(t, node, maintenance.ReasonReturned, corev1.EventTypeNormal, "announces from the node again")
	// The same kill without maintenance: what it saves.
	for fam, gap := range c.failover(t, ips, syscall.SIGKILL, 30*time.Second) {
		t.Logf("MAINTENANCE %s: without maintenance, the same kill left the address unanswered for %s", fam, gap.Round(time.Millisecond))
		if gap <= maintenanceGapBound {
			t.Errorf("%s: the kill without maintenance left a gap of only %s, within the bound with it (%s): the story shows nothing saved", fam, gap, maintenanceGapBound)
		}
	}
}

// maintainWhatTheUserOwns: one node cordoned, another labelled by its user,
// the third in maintenance; then the cordoned one in maintenance too, held as
// the last; the operator restarted; the third's maintenance ended, so that
// the held one leaves; MetalLB deactivated. It returns the running operator.
func (c *metallbCluster) maintainWhatTheUserOwns(t *testing.T, op *runningOperator, kubeconfig string) *runningOperator {
	cordoned, excluded, maintained := c.Nodes[0].Name, c.Nodes[1].Name, c.Nodes[2].Name
	kubectl(t, c.Env, "cordon", cordoned)
	kubectl(t, c.Env, "label", "node", excluded, corev1.LabelNodeExcludeBalancers+"=")
	kubectl(t, c.Env, "label", "--overwrite", "node", maintained, maintenanceOn)
	c.waitMaintained(t, maintained, "it carries the label "+maintenanceOn)
	// One decision covers every node: the cordon and the user's label were
	// seen, and neither changed anything.
	c.assertNotMarked(t, cordoned, excluded)
	if !c.nodeLabelled(t, cordoned, "") {
		t.Errorf("node %s, only cordoned, was taken out of MetalLB's announcements", cordoned)
	}

	kubectl(t, c.Env, "label", "--overwrite", "node", cordoned, maintenanceOn)
	held := fmt.Sprintf("Node %s is being taken down (it carries the label %s) but keeps MetalLB's announcements: it is the last node "+
		"that could announce for L2Advertisement l2", cordoned, maintenanceOn)
	c.waitNodeEvent(t, cordoned, maintenance.ReasonHeld, corev1.EventTypeWarning, held)
	c.waitMaintenanceStatus(t, []v1beta1.NodeMaintenance{
		{Node: cordoned, State: v1beta1.NodeHeld}, {Node: maintained, State: v1beta1.NodeOut}}, held)
	c.assertNotMarked(t, cordoned, excluded)

	if code := op.stop(t); code != 0 {
		t.Fatalf("the operator exited %d on SIGTERM", code)
	}
	op = startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+kubeconfig)
	op.waitReady(t)
	kubectl(t, c.Env, "label", "--overwrite", "node", maintained, maintenanceOff)
	c.waitMaintained(t, maintained, "")
	c.waitMaintained(t, cordoned, "it carries the label "+maintenanceOn)
	c.waitMaintenanceStatus(t, []v1beta1.NodeMaintenance{{Node: cordoned, State: v1beta1.NodeOut}}, "")

	kubectl(t, c.Env, "delete", "-n", metallbNamespace, "metallb/metallb", "l2advertisement/l2", "ipaddresspool/pool", "ipaddresspool/dual-stack")
	c.waitMaintained(t, cordoned, "")
	if !c.nodeLabelled(t, excluded, corev1.LabelNodeExcludeBalancers) {
		t.Errorf("node %s lost the label %s its user set", excluded, corev1.LabelNodeExcludeBalancers)
	}
	return op
}

// waitMaintained waits until the operator has a node out of MetalLB's
// announcements for why (labelled and marked), or, why empty, not.
func (c *metallbCluster) waitMaintained(t *testing.T, node, why string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		_, labelled := n.Labels[corev1.LabelNodeExcludeBalancers]
		mark, marked := n.Annotations[decide.MarkAnnotation]
		last = fmt.Sprintf("labelled %v, marked %v %q", labelled, marked, mark)
		if why == "" {
			return !labelled && !marked, nil
		}
		return labelled && mark == why, nil
	})
	if err != nil {
		t.Fatalf("node %s: %s; want it out of MetalLB's announcements for %q (empty: back in them)", node, last, why)
	}
}

// assertNotMarked checks that the operator marked none of the nodes.
func (c *metallbCluster) assertNotMarked(t *testing.T, nodes ...string) {
	t.Helper()
	for _, name := range nodes {
		n, err := c.Client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if mark, ok := n.Annotations[decide.MarkAnnotation]; ok {
			t.Errorf("node %s was marked %q: the operator changed it", name, mark)
		}
	}
}

// nodeLabelled tells whether a node carries the label ("": none of
// MetalLB's exclusion label).
func (c *metallbCluster) nodeLabelled(t *testing.T, node, key string) bool {
	t.Helper()
	n, err := c.Client.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if key == "" {
		_, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]
		return !excluded
	}
	_, ok := n.Labels[key]
	return ok
}

// waitNodeEvent waits for an Event of the reason and type on the node whose
// note has want.
func (c *metallbCluster) waitNodeEvent(t *testing.T, node, reason, eventType, want string) {
	t.Helper()
	if notes, ok := c.waitEventOn(t, "Node", node, reason, eventType, want); !ok {
		t.Fatalf("no %s Event %s on node %s saying %q within 30s; its Events of that reason: %q", eventType, reason, node, want, notes)
	}
}

// waitMaintenanceStatus waits until the MetalLB object's status lists the
// nodes in maintenance, by name and state, and its MaintenanceHeld condition
// says held (empty: no such condition).
func (c *metallbCluster) waitMaintenanceStatus(t *testing.T, want []v1beta1.NodeMaintenance, held string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err := kubectlErr(c.Env, "get", "metallb", "metallb", "-n", metallbNamespace, "-o", "json")
		obj := &v1beta1.MetalLB{}
		if err != nil || json.Unmarshal([]byte(out), obj) != nil {
			return false, nil
		}
		var got []v1beta1.NodeMaintenance
		for _, n := range obj.Status.Maintenance {
			got = append(got, v1beta1.NodeMaintenance{Node: n.Node, State: n.State})
		}
		cond := apimeta.FindStatusCondition(obj.Status.Conditions, plan.ConditionMaintenanceHeld)
		last = fmt.Sprintf("maintenance %+v, condition %+v", obj.Status.Maintenance, cond)
		condOK := (held == "" && cond == nil) || (cond != nil && cond.Status == metav1.ConditionTrue && strings.Contains(cond.Message, held))
		return slices.Equal(got, want) && condOK, nil
	})
	if err != nil {
		t.Fatalf("the MetalLB object's status: %s; want nodes %+v and the condition %s saying %q", last, want, plan.ConditionMaintenanceHeld, held)
	}
}

// drainForUpdate asks for a node's drain and then its uncordon, as OpenShift's
// machine-config daemon does around an update (the operator's maintenance is
// on by default on OpenShift), and waits until the node left MetalLB's
// announcements, then returned.
func (c *metallbCluster) drainForUpdate(t *testing.T, node string) {
	t.Helper()
	c.askDrain(t, node, "rendered-worker-1")
	c.askUncordon(t, node, "rendered-worker-1")
	c.waitMaintained(t, node, "")
}

// askDrain asks for a node's drain before an update to config, as the
// machine-config daemon does, and waits until the operator took the node out
// of MetalLB's announcements.
func (c *metallbCluster) askDrain(t *testing.T, node, config string) {
	t.Helper()
	kubectl(t, c.Env, "annotate", "--overwrite", "node", node, decide.DesiredDrainAnnotation+"=drain-"+config)
	c.waitMaintained(t, node, "the machine-config daemon asked for its drain ("+decide.DesiredDrainAnnotation+": drain-"+config+")")
}

// askUncordon asks for a node's uncordon once its update to config is done.
func (c *metallbCluster) askUncordon(t *testing.T, node, config string) {
	t.Helper()
	kubectl(t, c.Env, "annotate", "--overwrite", "node", node, decide.DesiredDrainAnnotation+"=uncordon-"+config)
}

// rollingGapBound is the bound on the longest gap in answers through
// a rolling cluster upgrade.
const rollingGapBound = 500 * time.Millisecond

// A cluster upgrade as OpenShift's machine-config operator carries it out,
// on a cluster with OpenShift's APIs and SCC admission, the operator
// installed from manifests/ and running as its service account: every node
// in turn, one at a time, gets the machine-config daemon's drain request, is
// cordoned, reboots (its containers SIGTERMed, then started again), gets the
// uncordon request and is uncordoned. The operator moves MetalLB's
// announcements off each node before its reboot and back after, with no
// setting (on OpenShift the drain request counts by default); a client
// asking for a dual-stack Service's addresses every 100 ms throughout never
// goes unanswered for over rollingGapBound. (The drain's evictions are left
// out: they move workloads, not MetalLB's announcements, which no eviction
// touches, the speakers being a DaemonSet's.)
func TestMaintenanceThroughAClusterUpgrade(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newMetallbCluster(t, func(o *testenv.Options) { o.SCCAdmission = true })
	c.installOpenShiftAPIs(t)
	c.installFromManifests(t)
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+c.serviceAccountKubeconfig(t))
	op.waitReady(t)
	c.configureDualStack(t)
	ips := c.expose(t, "web-dual", corev1.IPv4Protocol, corev1.IPv6Protocol)
	c.settledAnswerer(t, ips)
	watches := make([]*answerWatch, len(ips))
	for i, ip := range ips {
		watches[i] = c.watchAnswers(t, ip)
	}
	started := time.Now()
	for _, n := range c.Nodes {
		c.updateNode(t, n.Name, "rendered-worker-2")
	}
	for i, w := range watches {
		w.end()
		gap, at := w.longestGap()
		t.Logf("CLUSTER UPGRADE %s: %d nodes rebooted one at a time in %s; longest gap in answers %s, %s after the start",
			family(ips[i]), len(c.Nodes), time.Since(started).Round(time.Second), gap.Round(time.Millisecond), at.Sub(started).Round(time.Millisecond))
		if gap > rollingGapBound {
			t.Errorf("%s went unanswered for %s through the cluster upgrade; at most %s is allowed", ips[i], gap, rollingGapBound)
		}
	}
}

// updateNode updates a node as the machine-config daemon does: its drain
// asked for, the node cordoned, rebooted, its uncordon asked for and the node
// uncordoned; it waits until the operator took the node out of MetalLB's
// announcements before the reboot, and brought it back after.
func (c *metallbCluster) updateNode(t *testing.T, node, config string) {
	t.Helper()
	c.askDrain(t, node, config)
	kubectl(t, c.Env, "cordon", node)
	speaker := c.speakerPods(t)[node]
	c.Runner.StopNode(node, syscall.SIGTERM)
	c.restartNode(t, node, speaker)
	c.askUncordon(t, node, config)
	kubectl(t, c.Env, "uncordon", node)
	c.waitMaintained(t, node, "")
}
