package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// upstreamManifest is upstream's native manifest of the operand's release,
// copied by `make update-bindata`.
const upstreamManifest = "../../pkg/network/metallb/manifests/testdata/upstream/metallb-native.yaml"

// Adoption at the same version: MetalLB of the operand's release, installed
// by hand from upstream's manifest, serves an address; the user annotates the
// namespace and the operator takes every object over. Its pod templates differ
// from upstream's on purpose (priority classes, requests, the speaker's grace
// period, the controller not creating the memberlist Secret), so the takeover
// rolls the pods as an upgrade does: the controller first, then the speakers
// one at a time, the memberlist key kept and the address answered throughout.
func TestAdoptSameVersion(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newMetallbCluster(t)
	c.createClusterOperator(t)
	if out, err := kubectlErr(c.Env, "apply", "-f", upstreamManifest); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", upstreamManifest, err, out)
	}
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	c.configure(t)
	ip := c.exposeService(t)
	c.answerer(t, ip, 30*time.Second)
	key, before := c.memberlistKey(t), c.speakerPods(t)

	w := c.watchAnswers(t, ip)
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	kubectl(t, c.Env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")
	c.waitOwned(t, "daemonset/speaker", "deployment/controller", "secret/memberlist", "secret/metallb-webhook-cert")
	c.waitClusterOperatorVersion(t, "4.22.0")
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	w.end()

	gap, _ := w.longestGap()
	t.Logf("TAKEOVER: %d probes; longest gap between answers %s", len(w.answers), gap.Round(time.Millisecond))
	if gap > time.Second {
		t.Errorf("the address went unanswered for %s during the takeover; at most 1s is allowed", gap)
	}
	if got := c.memberlistKey(t); got != key {
		t.Error("the memberlist key changed during the takeover")
	}
	c.assertControllerFirst(t, release.MetalLB)
	c.assertSpeakersOneAtATime(t, before)
}

// assertSpeakersOneAtATime checks that every speaker was replaced, and each
// new one only once the one before it was ready: maxUnavailable 1. (Times are
// whole seconds on both sides, so the comparison cannot fail on a correct
// order.)
func (c *metallbCluster) assertSpeakersOneAtATime(t *testing.T, before map[string]string) {
	t.Helper()
	pods := c.speakers(t)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var lastReady metav1.Time
	for _, p := range pods {
		if before[p.Spec.NodeName] == p.Name {
			t.Errorf("the speaker on %s was not replaced", p.Spec.NodeName)
		}
		if p.CreationTimestamp.Before(&lastReady) {
			t.Errorf("speaker %s was created at %s, before the one replaced before it was ready at %s", p.Name, p.CreationTimestamp, lastReady)
		}
		lastReady = readySince(&p)
	}
}

// waitOwned waits until the objects, in metallb-system, carry the operator's
// ownership label.
func (c *metallbCluster) waitOwned(t *testing.T, objects ...string) {
	t.Helper()
	var out string
	for _, o := range objects {
		err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
			out, _ = kubectlErr(c.Env, "get", o, "-n", metallbNamespace, "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}")
			return out == "cluster-network-operator", nil
		})
		if err != nil {
			t.Fatalf("%s was not taken over within a minute: managed-by %q", o, out)
		}
	}
}

// Adoption and upgrade: MetalLB of the previous release, installed by hand
// from upstream's manifest, serves an address; the user annotates the
// namespace and the operator takes it over and upgrades it in the same step:
// the CRDs, then the controller, then the speakers one at a time, speakers of
// both releases in one memberlist cluster during the roll, the configuration
// kept field for field, the address answered throughout, and the new
// controller's webhook refusing a bad pool afterwards.
func TestAdoptAndUpgrade(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newMetallbCluster(t)
	c.createClusterOperator(t)
	c.handInstall(t, release.PreviousMetalLB)
	c.waitMetallb(t, release.PreviousMetalLB, 3*time.Minute)
	c.configure(t)
	c.applyOnceServed(t, writeTemp(t, bgpConfiguration))
	ip := c.exposeService(t)
	c.answerer(t, ip, 30*time.Second)
	key, before, config := c.memberlistKey(t), c.speakerPods(t), c.configuration(t)
	versionAt := c.watchClusterOperatorVersion(t, "4.22.0")

	w := c.watchAnswers(t, ip)
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	kubectl(t, c.Env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")
	c.waitMetallb(t, release.MetalLB, 5*time.Minute)
	c.waitClusterOperatorVersion(t, "4.22.0")
	w.end()

	gap, _ := w.longestGap()
	t.Logf("ADOPT-UPGRADE: %s to %s, %d probes; longest gap between answers %s", release.PreviousMetalLB, release.MetalLB, len(w.answers), gap.Round(time.Millisecond))
	if gap > time.Second {
		t.Errorf("the address went unanswered for %s during the takeover and upgrade; at most 1s is allowed", gap)
	}
	if got := c.memberlistKey(t); got != key {
		t.Error("the memberlist key changed during the takeover and upgrade")
	}
	if got := c.configuration(t); got != config {
		t.Errorf("the configuration changed:\nbefore %s\nafter  %s", config, got)
	}
	c.assertControllerFirst(t, release.MetalLB)
	c.assertSpeakersOneAtATime(t, before)
	c.assertReportedAfterSpeakers(t, versionAt())
	for node, pod := range c.speakerPods(t) {
		if log := c.Runner.ContainerLog(pod, "speaker"); !joinedOthers(log, node) {
			t.Errorf("the new speaker %s on %s did not join the other speakers' memberlist cluster; its log:\n%s", pod, node, log)
		}
	}
	c.assertBadPoolRefused(t)
}

// bgpConfiguration is more of the user's configuration, kept out of the
// layer-2 answers. (No BGPPeer: the previous release's CRD puts a maximum on
// its uint32 ASNs that kube-apiserver v1.37 refuses every peer for.)
const bgpConfiguration = `apiVersion: metallb.io/v1beta1
kind: Community
metadata: {name: communities, namespace: metallb-system, labels: {site: lab}}
spec:
  communities:
  - {name: no-advertise, value: "65535:65282"}
---
apiVersion: metallb.io/v1beta1
kind: BGPAdvertisement
metadata: {name: bgp, namespace: metallb-system}
spec: {ipAddressPools: [pool], communities: [no-advertise], aggregationLength: 32, localPref: 100}
`

// configuration is the user's MetalLB configuration objects as the API
// server serves them, without what the server maintains.
func (c *metallbCluster) configuration(t *testing.T) string {
	t.Helper()
	return kubectl(t, c.Env, "get", "ipaddresspools,l2advertisements,communities,bgpadvertisements", "-n", metallbNamespace, "-o",
		`jsonpath={range .items[*]}{.apiVersion} {.kind}/{.metadata.name}: {.metadata.labels} {.metadata.annotations} {.spec}{"\n"}{end}`)
}

// watchClusterOperatorVersion follows the ClusterOperator from now on and
// returns a function that says when it first reported version: called once
// the version shows, it waits for the watch to have seen it too (at most 5 s,
// then zero).
func (c *metallbCluster) watchClusterOperatorVersion(t *testing.T, version string) func() time.Time {
	t.Helper()
	var at time.Time
	seen := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	client := dynamicClient(t, c.Env) // here: a test may not fail from another goroutine
	go func() {
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if operatorVersion(clusterOperator(ctx, client)) != version {
				return false, nil
			}
			at = time.Now()
			close(seen)
			return true, nil
		})
	}()
	return func() time.Time {
		select {
		case <-seen:
			return at
		case <-time.After(5 * time.Second):
			return time.Time{}
		}
	}
}

// assertReportedAfterSpeakers checks that the version was reported only once
// every speaker was ready. (Readiness is in whole seconds: the comparison
// cannot fail on a correct order.)
func (c *metallbCluster) assertReportedAfterSpeakers(t *testing.T, reported time.Time) {
	t.Helper()
	if reported.IsZero() {
		t.Fatal("the ClusterOperator never reported the new version")
	}
	for _, p := range c.speakers(t) {
		if ready := readySince(&p); ready.Time.After(reported) {
			t.Errorf("the new version was reported at %s, before speaker %s was ready at %s", reported.Format(time.RFC3339Nano), p.Name, ready)
		}
	}
}

// assertBadPoolRefused checks that the controller's webhook serves: a pool
// whose range is not one is refused with the webhook's message. Until the
// endpoints name the new controller pod, the API server cannot reach it.
func (c *metallbCluster) assertBadPoolRefused(t *testing.T) {
	t.Helper()
	bad := writeTemp(t, "apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata:\n  name: bad\n  namespace: metallb-system\nspec:\n  addresses:\n  - 192.0.2.200-192.0.2.150\n")
	var out string
	var err error
	_ = wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err = kubectlErr(c.Env, "apply", "-f", bad)
		return !strings.Contains(out, "failed calling webhook"), nil
	})
	if err == nil || !strings.Contains(out, "denied the request") {
		t.Errorf("a pool with a reversed range was not refused by MetalLB's webhook: %v\n%s", err, out)
	}
}

// createClusterOperator installs OpenShift's ClusterOperator API and the
// operator's ClusterOperator, as the cluster version operator does.
func (c *metallbCluster) createClusterOperator(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, c.Env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	kubectl(t, c.Env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml"))
}
