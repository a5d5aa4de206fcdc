package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden outputs of kubectl metallb under testdata/kubectl-metallb")

const pluginGoldens = "testdata/kubectl-metallb"

// The configuration the explain story adds to configure's pool and
// advertisement: pools only the Services naming them use, one of one
// address, one that no advertisement selects, one announced only on an
// interface no node has, one announced only from the second node.
const explainConfig = `apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata: {name: l2, namespace: metallb-system}
spec: {ipAddressPools: [pool, small]}
---
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: small, namespace: metallb-system}
spec: {addresses: [192.0.2.111/32], autoAssign: false}
---
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: dark, namespace: metallb-system}
spec: {addresses: [192.0.2.112/32], autoAssign: false}
---
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: edge, namespace: metallb-system}
spec: {addresses: [192.0.2.114/32], autoAssign: false}
---
apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata: {name: edge, namespace: metallb-system}
spec:
  ipAddressPools: [edge]
  nodeSelectors: [{matchLabels: {kubernetes.io/hostname: %s}}]
`

// explainServices are the Services of the story, each with what explain
// tells of it: the reason in its output ("" for announced).
var explainServices = []struct{ name, manifest, says string }{
	{"other-class", `spec: {type: LoadBalancer, loadBalancerClass: example.com/lb, ports: [{port: 80}]}`, "(OtherLoadBalancerClass)"},
	{"ipv6-only", `spec: {type: LoadBalancer, ipFamilies: [IPv6], ipFamilyPolicy: SingleStack, selector: {app: web}, ports: [{port: 80}]}`, "(NoPoolServes)"},
	{"no-such-pool", `metadata: {annotations: {metallb.io/address-pool: gold}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "(NoSuchPool)"},
	{"small-a", `metadata: {annotations: {metallb.io/address-pool: small}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "Announced:"},
	{"small-b", `metadata: {annotations: {metallb.io/address-pool: small}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "(PoolExhausted)"},
	{"outside", `metadata: {annotations: {metallb.io/loadBalancerIPs: 203.0.113.50}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "(AddressOutsidePools)"},
	{"taken", `metadata: {annotations: {metallb.io/loadBalancerIPs: 192.0.2.100}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 8080}]}`, "(AddressTaken)"},
	{"shared-a", `metadata: {annotations: {metallb.io/loadBalancerIPs: 192.0.2.105, metallb.io/allow-shared-ip: blue}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "Announced:"},
	{"shared-b", `metadata: {annotations: {metallb.io/loadBalancerIPs: 192.0.2.105, metallb.io/allow-shared-ip: green}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 443}]}`, "(SharingKeyConflict)"},
	{"dark", `metadata: {annotations: {metallb.io/address-pool: dark}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}`, "(PoolNotAnnounced)"},
	{"no-endpoints", `spec: {type: LoadBalancer, selector: {app: nothing}, ports: [{port: 80}]}`, "(NoReadyEndpoint)"},
	{"local", `metadata: {annotations: {metallb.io/address-pool: edge}}
spec: {type: LoadBalancer, externalTrafficPolicy: Local, selector: {app: web}, ports: [{port: 80}]}`, "(NoEligibleNode)"},
}

// kubectl metallb, run by the real kubectl as a plugin against the real
// MetalLB on three nodes: before any pool it says MetalLB is not running;
// then, for each reason a Service has no address or no announcement, its
// sentence and fix (golden outputs), where it is announced when it is, and
// the status of the whole installation, with the configuration's finding.
// A user bound to view reads it all but the nodes, and is told so; with
// every node excluded from load balancers, the announced Service says why
// it no longer is.
func TestKubectlMetallbExplains(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t)
	startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB)).waitReady(t)
	c.applyOnceServed(t, writeTemp(t, serviceManifest("early", `spec: {type: LoadBalancer, ports: [{port: 80}]}`)))
	pluginSays(t, c.Env, "", "early-no-pool", "(NoPool)", "explain", "service/early", "-n", "default")
	kubectl(t, c.Env, "delete", "service", "early")
	c.configure(t)
	c.applyOnceServed(t, writeTemp(t, fmt.Sprintf(explainConfig, c.Nodes[1].Name)))
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	c.exposeService(t)
	pluginSays(t, c.Env, "", "web-announced", "Announced:", "explain", "service/web", "-n", "default")
	for _, s := range explainServices {
		c.applyOnceServed(t, writeTemp(t, serviceManifest(s.name, s.manifest)))
	}
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, wiredConfig))
	for _, s := range explainServices {
		pluginSays(t, c.Env, "", s.name, s.says, "explain", "service/"+s.name, "-n", "default")
	}
	pluginSays(t, c.Env, "", "wired", "(InterfaceMissing)", "explain", "service/wired", "-n", "default")
	c.nodeAddressConflict(t)
	pluginSays(t, c.Env, "", "status", "PoolNotAnnounced", "status")
	c.waitInterfaceMissingTold(t)

	kubectl(t, c.Env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_08_user-roles.yaml"))
	kubectl(t, c.Env, "create", "clusterrolebinding", "viewer", "--clusterrole=view", "--user=viewer")
	pluginSays(t, c.Env, "viewer", "status-as-viewer", "Could not read", "status")
	pluginSays(t, c.Env, "viewer", "web-as-viewer", "nodes: forbidden", "explain", "service/web", "-n", "default")

	for _, n := range c.Nodes {
		kubectl(t, c.Env, "label", "node", n.Name, corev1.LabelNodeExcludeBalancers+"=")
	}
	pluginSays(t, c.Env, "", "web-all-nodes-excluded", "(AllNodesExcluded)", "explain", "service/web", "-n", "default")
}

// wiredConfig is a pool whose L2Advertisement names an interface no node
// has, and a Service of that pool in front of the web pod.
const wiredConfig = `apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: wired, namespace: metallb-system}
spec: {addresses: [192.0.2.113/32], autoAssign: false}
---
apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata: {name: wired, namespace: metallb-system}
spec: {ipAddressPools: [wired], interfaces: [eth9]}
---
apiVersion: v1
kind: Service
metadata: {name: wired, namespace: default, annotations: {metallb.io/address-pool: wired}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}
`

// waitInterfaceMissingTold waits for the operator to tell, on the
// L2Advertisement that names the interfaces, the Service of wiredConfig no
// node announces.
func (c *metallbCluster) waitInterfaceMissingTold(t *testing.T) {
	t.Helper()
	note := strings.Join(waitEventNotes(t, c.Env, plan.ReasonInterfaceMissing), "\n")
	if !strings.Contains(note, "Service default/wired is not announced: node ") ||
		!strings.Contains(note, "has none of the interfaces L2Advertisement metallb-system/wired names (eth9)") {
		t.Errorf("the operator's InterfaceMissing Event says %q", note)
	}
}

// tellsInterfaceMissing has a Service no node can announce (wiredConfig),
// waits for the operator to tell it, and deletes it.
func (c *metallbCluster) tellsInterfaceMissing(t *testing.T) {
	t.Helper()
	c.createWebPod(t)
	wired := writeTemp(t, wiredConfig)
	kubectl(t, c.Env, "apply", "-f", wired)
	c.waitInterfaceMissingTold(t)
	kubectl(t, c.Env, "delete", "-f", wired)
}

// nodeAddressConflict has the node-address mode serve two Services on the
// same port: the older keeps it, and explain tells the other why it has no
// address.
func (c *metallbCluster) nodeAddressConflict(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "apply", "-f", guideExample(t, "node-address-mode"))
	// Local, the endpoint on the first node: one node address each, so that
	// the loss is one Event (the recorder makes a node's Events of one reason
	// on one object a series, which keeps the first's words).
	service := `spec: {type: LoadBalancer, loadBalancerClass: networkoperator.openshift.io/node-address, externalTrafficPolicy: Local, selector: {app: web}, ports: [{port: 8443}]}`
	c.applyOnceServed(t, writeTemp(t, serviceManifest("node-first", service)))
	pluginSays(t, c.Env, "", "node-first", "192.0.2.10", "explain", "service/node-first", "-n", "default")
	// The older of two Services is the one created first, to the second
	// (creationTimestamp), then the lesser UID: the second Service is made in
	// a later second, so that which one keeps the port is not left to UIDs.
	created, err := time.Parse(time.RFC3339, kubectl(t, c.Env, "get", "service", "node-first", "-o", "jsonpath={.metadata.creationTimestamp}"))
	if err != nil {
		t.Fatal(err)
	}
	<-time.After(time.Until(created.Add(time.Second)))
	c.applyOnceServed(t, writeTemp(t, serviceManifest("node-second", service)))
	pluginSays(t, c.Env, "", "node-second", "(NodeAddressPortTaken)", "explain", "service/node-second", "-n", "default")
}

// serviceManifest is a Service in the default namespace, of a spec (and
// metadata) in YAML flow style.
func serviceManifest(name, body string) string {
	out := "apiVersion: v1\nkind: Service\n"
	meta := "metadata: {name: " + name + ", namespace: default}"
	if rest, ok := strings.CutPrefix(body, "metadata: {"); ok {
		meta = "metadata: {name: " + name + ", namespace: default, " + rest[:strings.Index(rest, "\n")]
		body = rest[strings.Index(rest, "\n")+1:]
	}
	return out + meta + "\n" + body + "\n"
}

// pluginSays runs kubectl metallb (as user, unless ""), until its output says
// what it is to, and holds it to its golden output: MetalLB's reports (pool
// usage, statuses, Events) settle a moment after what they report. With
// -update it writes the output once it says it, and has stayed the same for
// two runs.
func pluginSays(t *testing.T, env *testenv.Env, user, golden, says string, args ...string) {
	t.Helper()
	file := filepath.Join(pluginGoldens, golden+".txt")
	want, err := os.ReadFile(file)
	if err != nil && !*updateGolden {
		t.Fatalf("%v (go test -run %s ./test/e2e/ -update writes it)", err, t.Name())
	}
	var out, last string
	err = wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		last, out = out, plugin(t, env, user, args...)
		if *updateGolden {
			return strings.Contains(out, says) && out == last, nil
		}
		return out == string(want), nil
	})
	if *updateGolden && err == nil {
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("kubectl metallb %s did not say what %s holds within a minute; it says:\n%s\nwant:\n%s", strings.Join(args, " "), file, out, want)
	}
}

// plugin runs kubectl metallb through the real kubectl, which finds the
// plugin on the PATH.
func plugin(t *testing.T, env *testenv.Env, user string, args ...string) string {
	t.Helper()
	kubectlBin, err := testenv.Binary("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	args = append(append([]string{"metallb"}, args...), "--color=never")
	if user != "" {
		args = append(args, "--as="+user)
	}
	cmd := exec.Command(kubectlBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "PATH="+filepath.Dir(pluginBinary)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectl metallb over BGP, with each backend, against the real MetalLB and
// a real router: explain names every node announcing the Service and the
// peer it announces to, status each peer with its sessions where the backend
// reports them (frr-k8s's BGPSessionStates), and, with frr-k8s, a peer at an
// address where no router answers as unreachable (status -o json); with the
// BGPPeer gone, explain says so.
func TestKubectlMetallbBGP(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		c, _, _ := newBGPServing(t, "", backend)
		c.waitServiceBGPStatus(t, c.nodeNames()...)
		pluginSays(t, c.Env, "", "bgp-"+backend+"-web", "BGP from", "explain", "service/web", "-n", "default")
		sessions := "Established"
		if backend == "native" {
			sessions = "not reported"
		}
		pluginSays(t, c.Env, "", "bgp-"+backend+"-status", sessions, "status")
		if backend == "frr-k8s" { // the native backend reports no session
			kubectl(t, c.Env, "patch", "bgppeer.v1beta2.metallb.io", "router", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"peerAddress":"192.0.2.250"}}`)
			unreachable := "BGPPeer metallb-system/router (192.0.2.250, ASN 64501) has no established session from any node"
			c.waitPluginFinding(t, plan.ReasonPeerUnreachable, unreachable)
			c.waitTold(t, map[string]string{plan.ReasonPeerUnreachable: unreachable})
		}
		kubectl(t, c.Env, "delete", "bgppeer.v1beta2.metallb.io", "router", "-n", metallbNamespace)
		pluginSays(t, c.Env, "", "bgp-"+backend+"-no-peer", "(NoBGPPeer)", "explain", "service/web", "-n", "default")
	})
}

// frrStatusPoll is frr-k8s's frr-status --poll-interval default, which holds:
// the module renders frr-status without one. A session state not written when FRRNodeState changed
// (the reload still under way) is written at the next poll, this long after.
const frrStatusPoll = 2 * time.Minute

// waitPluginFinding waits until kubectl metallb status -o json has a finding
// of a reason that says what it is to: a session's finding may wait for
// frr-k8s's next poll and then plan.SessionGrace (CI run 106: the peer
// changed at 15:46:57, frr-status polled during the reload at 15:47:07 and
// next at 15:48:30, when it wrote the new peer's states).
func (c *metallbCluster) waitPluginFinding(t *testing.T, reason, says string) {
	t.Helper()
	var got []explain.Finding
	timeout := frrStatusPoll + plan.SessionGrace + time.Minute
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, timeout, true, func(context.Context) (bool, error) {
		var r explain.Report
		if err := json.Unmarshal([]byte(plugin(t, c.Env, "", "status", "-o", "json")), &r); err != nil {
			return false, err
		}
		got = r.Findings
		return slices.ContainsFunc(got, func(f explain.Finding) bool { return f.Reason == reason && strings.Contains(f.Message, says) }), nil
	})
	if err != nil {
		t.Fatalf("kubectl metallb status -o json has no finding %s saying %q within %s (%v); its findings: %+v", reason, says, timeout, err, got)
	}
}

// Off bare metal the operator deploys no MetalLB, and explain says so with
// the operator's own words, from the MetalLB object's conditions; what it
// cannot read (MetalLB's kinds, never installed) it names.
func TestKubectlMetallbOffBareMetal(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, operatorNamespace, metallbNamespace)
	startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--platform=AWS").waitReady(t)
	kubectl(t, env, "apply", "-f", writeTemp(t, "apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata: {name: metallb, namespace: metallb-system}\n"))
	kubectl(t, env, "apply", "-f", writeTemp(t, serviceManifest("web", `spec: {type: LoadBalancer, ports: [{port: 80}]}`)))
	pluginSays(t, env, "", "off-bare-metal", "(PlatformNotSupported)", "explain", "service/web", "-n", "default")
}
