package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Peers of the conversion stories: one written as v1beta2 with a field only
// v1beta2 has (its password in a Secret), one written as v1beta1 without a
// hold time.
var securedPeer = `apiVersion: v1
kind: Secret
type: kubernetes.io/basic-auth
metadata:
  name: bgp-password
  namespace: metallb-system
stringData:
  password: example
---
` + securedPeerYAML("192.0.2.3", "bgp-password")

// securedPeerYAML is the v1beta2 BGPPeer "secured", whose password is in a
// Secret, with more lines of spec.
func securedPeerYAML(address, secret string, spec ...string) string {
	return `apiVersion: metallb.io/v1beta2
kind: BGPPeer
metadata:
  name: secured
  namespace: metallb-system
spec:
  myASN: 64500
  peerASN: 64501
  peerAddress: ` + address + `
` + strings.Join(append(spec, ""), "\n") + `  passwordSecret:
    name: ` + secret + `
    namespace: metallb-system
`
}

const (
	legacyPeer = `apiVersion: metallb.io/v1beta1
kind: BGPPeer
metadata:
  name: legacy
  namespace: metallb-system
spec:
  myASN: 64500
  peerASN: 64501
  peerAddress: 192.0.2.3
`
)

// Conversion through MetalLB's controller: once it serves, the BGPPeer CRD
// converts through its webhook, with the CA bundle the controller injected
// (the operator owns none of it); a v1beta1 peer reads back as v1beta2 with
// the hold and keepalive times MetalLB's converter sets, and a v1beta2 one as
// v1beta1 with them too, without what v1beta1 cannot hold.
func TestBGPPeerConversion(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, _ := newConfiguredCluster(t)
	waitConversion(t, c, "Webhook")
	c.applyOnceServed(t, writeTemp(t, securedPeer+"---\n"+legacyPeer))

	want := `{"disableMP":false,"dualStackAddressFamily":false,"holdTime":"0s","keepaliveTime":"0s","myASN":64500,"passwordSecret":{},"peerASN":64501,"peerAddress":"192.0.2.3","peerPort":179}`
	if got := peerSpec(t, c, "v1beta2", "legacy"); got != want {
		t.Errorf("the v1beta1 peer reads as v1beta2 %s: not as MetalLB's converter makes it", got)
	}
	if got := peerSpec(t, c, "v1beta1", "secured"); got != `{"holdTime":"0s","keepaliveTime":"0s","myASN":64500,"peerASN":64501,"peerAddress":"192.0.2.3","peerPort":179}` {
		t.Errorf("the v1beta2 peer reads as v1beta1 %s: not as MetalLB's converter makes it", got)
	}
	managers := kubectl(t, c.Env, "get", "crd", "bgppeers.metallb.io", "--show-managed-fields", "-o", "json")
	assertCABundleNotOurs(t, managers)
}

// Without webhooks (--metallb-webhooks=false) BGPPeers convert with None, as
// the user guide says: the API server rewrites the apiVersion and drops what
// the version read has no field for, and sets nothing.
func TestBGPPeerConversionWithoutWebhooks(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, operatorNamespace)
	op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--platform=BareMetal", "--metallb-webhooks=false")
	op.waitReady(t)
	c := &metallbCluster{&cluster.Cluster{Env: env}}
	waitConversion(t, c, "None")
	applyOnceServed(t, env, writeTemp(t, securedPeer+"---\n"+legacyPeer))
	if got := peerSpec(t, c, "v1beta2", "legacy"); got != `{"disableMP":false,"dualStackAddressFamily":false,"myASN":64500,"peerASN":64501,"peerAddress":"192.0.2.3","peerPort":179}` {
		t.Errorf("the v1beta1 peer reads as v1beta2 %s", got)
	}
	if got := peerSpec(t, c, "v1beta1", "secured"); got != `{"myASN":64500,"peerASN":64501,"peerAddress":"192.0.2.3","peerPort":179}` {
		t.Errorf("the v1beta2 peer reads as v1beta1 %s", got)
	}
}

// waitConversion waits until BGPPeers convert with the strategy; with the
// webhook, once the controller has injected its CA bundle.
func waitConversion(t *testing.T, c *metallbCluster, strategy string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		got, _ = kubectlErr(c.Env, "get", "crd", "bgppeers.metallb.io", "-o",
			`jsonpath={.spec.conversion.strategy} {.spec.conversion.webhook.clientConfig.caBundle}`)
		s, ca, _ := strings.Cut(got, " ")
		return s == strategy && (strategy != "Webhook" || ca != ""), nil
	})
	if err != nil {
		t.Fatalf("BGPPeers convert as %q, want %s", got, strategy)
	}
}

// peerSpec reads a BGPPeer's spec in a version, as JSON.
func peerSpec(t *testing.T, c *metallbCluster, version, name string) string {
	t.Helper()
	out := kubectl(t, c.Env, "get", "bgppeers."+version+".metallb.io", name, "-n", metallbNamespace, "-o", "jsonpath={.spec}")
	_, spec, _ := strings.Cut(out, "{") // past kubectl's deprecation warning for v1beta1
	return "{" + spec
}

// assertCABundleNotOurs checks, in a CRD's JSON with its managed fields, that
// no field manager of the operator owns the CA bundle.
func assertCABundleNotOurs(t *testing.T, crdJSON string) {
	t.Helper()
	var crd struct {
		Metadata struct {
			ManagedFields []struct {
				Manager  string          `json:"manager"`
				FieldsV1 json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(crdJSON), &crd); err != nil {
		t.Fatal(err)
	}
	owner := ""
	for _, f := range crd.Metadata.ManagedFields {
		if strings.Contains(string(f.FieldsV1), "caBundle") {
			owner = f.Manager
		}
		if strings.HasPrefix(f.Manager, "cluster-network-operator") && strings.Contains(string(f.FieldsV1), "caBundle") {
			t.Errorf("the operator (%s) owns the CA bundle", f.Manager)
		}
	}
	t.Logf("the CA bundle is %q's", owner)
}
