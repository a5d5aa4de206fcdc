package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The cluster's TLS profile, OpenShift's APIServer's (its real CRD): unset,
// it is Intermediate, and the operator's metrics endpoint and the real
// controller's and speakers' accept TLS 1.2 and 1.3 (MetalLB alone accepts
// only 1.3). Turned Modern, the speakers roll one at a time while a client
// asks for the Service's address every 100 ms, with no gap over 1 s; then
// all three refuse TLS 1.2 and accept 1.3, the operator still the process
// it was.
func TestClusterTLSProfile(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newMetallbCluster(t)
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, string(testenv.APIServerCRD)))
	kubectl(t, c.Env, "wait", "--for=condition=Established", "crd/apiservers.config.openshift.io")
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, "apiVersion: config.openshift.io/v1\nkind: APIServer\nmetadata:\n  name: cluster\nspec: {}\n"))
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB))
	op.waitReady(t)
	c.configure(t)
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	ip := c.exposeService(t)
	c.answerer(t, ip, 30*time.Second)
	assertHandshakes(t, "Intermediate", c.tlsEndpoints(t, op), true)

	before := c.speakerPods(t)
	w := c.watchAnswers(t, ip)
	kubectl(t, c.Env, "patch", "apiserver", "cluster", "--type=merge", "-p", `{"spec":{"tlsSecurityProfile":{"type":"Modern","modern":{}}}}`)
	c.waitSpeakerReplaced(t, before)
	c.waitSpeakerRollout(t)
	rolledOut := time.Now()
	c.waitAnswer(t, w, func(a answer) bool { return a.node != "" && a.at.After(rolledOut) }, 30*time.Second, "an answer for %s after the rollout", ip)
	w.end()
	gap, _ := w.longestGap()
	t.Logf("TLS PROFILE: Intermediate to Modern, %d probes; longest gap between answers %s", len(w.answers), gap.Round(time.Millisecond))
	if gap > time.Second {
		t.Errorf("the address went unanswered for %s while the speakers took the new TLS profile; at most 1s is allowed", gap)
	}
	c.assertSpeakersOneAtATime(t, before)
	c.waitMetallb(t, release.MetalLB, time.Minute) // the controller too
	assertHandshakes(t, "Modern", c.tlsEndpoints(t, op), false)
	select {
	case <-op.done:
		t.Errorf("the operator exited when the profile changed:\n%s", op.log())
	default:
	}
}

// tlsEndpoints are the addresses of the operator's metrics endpoint, and of
// the controller's and each speaker's, by what they are, once MetalLB's pods
// are one ready controller and a ready speaker on each node (a replaced
// controller's pod may still be listed, and no longer listen).
func (c *metallbCluster) tlsEndpoints(t *testing.T, op *runningOperator) map[string]string {
	t.Helper()
	var endpoints map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
		if err != nil {
			return false, err
		}
		endpoints = map[string]string{"the operator's metrics": op.metrics}
		for _, p := range pods.Items {
			if ready := readySince(&p); p.DeletionTimestamp != nil || ready.IsZero() || p.Status.PodIP == "" {
				return false, nil
			}
			endpoints[fmt.Sprintf("%s's metrics (%s)", p.Labels["component"], p.Name)] = net.JoinHostPort(p.Status.PodIP, "9120")
		}
		return len(endpoints) == 2+len(c.Nodes), nil
	})
	if err != nil {
		t.Fatalf("MetalLB's pods are not one ready controller and a ready speaker per node: %v", endpoints)
	}
	return endpoints
}

// assertHandshakes checks that every endpoint accepts TLS 1.3 and, as tls12
// says, accepts or refuses TLS 1.2 (with the protocol-version alert, not for
// any other reason).
func assertHandshakes(t *testing.T, profile string, endpoints map[string]string, tls12 bool) {
	t.Helper()
	for what, addr := range endpoints {
		if err := handshake(addr, tls.VersionTLS13); err != nil {
			t.Errorf("%s: %s at %s refused TLS 1.3: %v", profile, what, addr, err)
		}
		err := handshake(addr, tls.VersionTLS12)
		switch {
		case tls12 && err != nil:
			t.Errorf("%s: %s at %s refused TLS 1.2: %v", profile, what, addr, err)
		case !tls12 && err == nil:
			t.Errorf("%s: %s at %s accepted TLS 1.2", profile, what, addr)
		case !tls12 && !strings.Contains(err.Error(), "protocol version not supported"):
			t.Errorf("%s: %s at %s failed TLS 1.2 for another reason than its version: %v", profile, what, addr, err)
		}
	}
	t.Logf("%s: %d endpoints accept TLS 1.3, and TLS 1.2 accepted %t", profile, len(endpoints), tls12)
}

// handshake makes a TLS handshake of one version with addr, once addr takes
// connections (a pod just made ready may not route yet). The certificates are
// self-signed: there is nothing to verify them against.
func handshake(addr string, version uint16) error {
	var err error
	_ = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var conn *tls.Conn
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
			&tls.Config{InsecureSkipVerify: true, MinVersion: version, MaxVersion: version}) //nolint:gosec // see above
		if err == nil {
			conn.Close()
		}
		var op *net.OpError
		return !errors.As(err, &op) || op.Op != "dial", nil
	})
	return err
}

// frrK8sTLSEndpoints are the TLS endpoints of frr-k8s: the metrics of each
// node's frr-k8s and FRR, and the status cleaner's webhook.
func (c *bgpCluster) frrK8sTLSEndpoints(t *testing.T) map[string]string {
	t.Helper()
	endpoints := map[string]string{}
	for selector, ports := range map[string][]string{"app=frr-k8s": {"9140", "9141"}, "app=frr-k8s-webhook-server": {"19443"}} {
		pods := c.podsOf(t, selector)
		if len(pods) == 0 {
			t.Fatalf("no pods %s", selector)
		}
		for _, p := range pods {
			for _, port := range ports {
				endpoints[fmt.Sprintf("%s port %s", p.Name, port)] = net.JoinHostPort(p.Status.PodIP, port)
			}
		}
	}
	return endpoints
}
