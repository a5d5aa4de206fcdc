package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// upstreamManifest is upstream's native manifest of the operand's release,
// copied by `make update-bindata`.
const upstreamManifest = "../../pkg/network/metallb/testdata/upstream/metallb-native.yaml"

// Adoption at the same version: MetalLB v0.16.1 installed by hand from
// upstream's manifest serves an address; the user annotates the namespace and
// the operator takes every object over. Its pod templates differ from
// upstream's on purpose (priority classes, requests, the speaker's grace
// period, the controller not creating the memberlist Secret), so the takeover
// rolls the pods: the speakers one at a time, as an upgrade rolls them, the
// memberlist key kept and the address answered throughout. (At the same
// version the controller and the speakers roll together: nothing the speakers
// run needs a newer controller.)
func TestAdoptSameVersion(t *testing.T) {
	c := newMetallbCluster(t)
	kubectl(t, c.env, "apply", "-f", "../../pkg/status/testdata/clusteroperators-crd.yaml")
	kubectl(t, c.env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	kubectl(t, c.env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_cluster-network-operator_06_clusteroperator.yaml"))
	if out, err := kubectlErr(c.env, "apply", "-f", upstreamManifest); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", upstreamManifest, err, out)
	}
	c.waitMetallb(t, "v0.16.1", 3*time.Minute)
	c.configure(t)
	ip := c.exposeService(t)
	c.answerer(t, ip, 30*time.Second)
	key, before := c.memberlistKey(t), c.speakerPods(t)

	w := c.watchARP(t, ip)
	op := startOperator(t, c.env, release("4.22.0", "v0.16.1"))
	op.waitReady(t)
	kubectl(t, c.env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")
	c.waitOwned(t, "daemonset/speaker", "deployment/controller", "secret/memberlist", "secret/metallb-webhook-cert")
	c.waitClusterOperatorVersion(t, "4.22.0")
	c.waitMetallb(t, "v0.16.1", 3*time.Minute)
	w.end()

	gap, _ := w.longestGap()
	t.Logf("TAKEOVER: %d probes; longest gap between answers %s", len(w.answers), gap.Round(time.Millisecond))
	if gap > time.Second {
		t.Errorf("the address went unanswered for %s during the takeover; at most 1s is allowed", gap)
	}
	if got := c.memberlistKey(t); got != key {
		t.Error("the memberlist key changed during the takeover")
	}
	c.assertSpeakersOneAtATime(t, before)
}

// assertSpeakersOneAtATime checks that every speaker was replaced, and each
// new one only once the one before it was ready: maxUnavailable 1. (Times are
// whole seconds on both sides, so the comparison cannot fail on a correct
// order.)
func (c *metallbCluster) assertSpeakersOneAtATime(t *testing.T, before map[string]string) {
	t.Helper()
	pods, err := c.client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var lastReady metav1.Time
	for _, p := range pods.Items {
		if before[p.Spec.NodeName] == p.Name {
			t.Errorf("the speaker on %s was not replaced", p.Spec.NodeName)
		}
		if p.CreationTimestamp.Before(&lastReady) {
			t.Errorf("speaker %s was created at %s, before the one replaced before it was ready at %s", p.Name, p.CreationTimestamp, lastReady)
		}
		lastReady = readySince(&p)
	}
}

func readySince(p *corev1.Pod) metav1.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime
		}
	}
	return metav1.Time{}
}

// waitOwned waits until the objects, in metallb-system, carry the operator's
// ownership label.
func (c *metallbCluster) waitOwned(t *testing.T, objects ...string) {
	t.Helper()
	var out string
	for _, o := range objects {
		err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			out, _ = kubectlErr(c.env, "get", o, "-n", metallbNamespace, "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}")
			return out == "cluster-network-operator", nil
		})
		if err != nil {
			t.Fatalf("%s was not taken over within a minute: managed-by %q", o, out)
		}
	}
}
