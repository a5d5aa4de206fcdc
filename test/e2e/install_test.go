package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

const (
	manifestsDir    = "../../manifests"
	operatorAccount = "system:serviceaccount:" + operatorNamespace + ":cluster-network-operator"
)

// Installed from manifests/ as a user does (kubectl apply -k, and the
// ClusterOperator and the speakers' SCC as on OpenShift), the operator runs
// with its service account's identity alone through activation, a scrape of
// its metrics, a Service of the node-address mode, tuning, an upgrade and
// deactivation, with the real MetalLB and its webhooks. The cluster admits
// pods by OpenShift's own SCC admission, kube-controller-manager creating
// them as their service accounts: every MetalLB and frr-k8s pod is admitted
// under the SCC the module grants it, and runs. Every request the operator
// makes is in the API server's audit log: each must be granted by the
// manifests' RBAC, and each permission granted must have been used.
func TestInstalledOperatorUsesWhatItIsGranted(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newMetallbCluster(t, func(o *testenv.Options) { o.Audit, o.SCCAdmission = true, true })
	serviceCA := c.installOpenShiftAPIs(t)

	c.installFromManifests(t)
	kubeconfig := c.serviceAccountKubeconfig(t)
	// The memberlist key a hand install left, handed over as the user guide says.
	kubectl(t, c.Env, "create", "secret", "generic", "memberlist", "-n", "metallb-system", "--from-literal=secretkey="+strings.Repeat("k", 128))
	kubectl(t, c.Env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")

	// A rollout waits for MetalLB's readiness probes (10 s): with a short hung
	// timeout it is reported hung on the way, as a stuck one would be.
	hung := "--rollout-hung-timeout=5s"
	op := startOperator(t, c.Env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+kubeconfig, hung, c.metricsCertFlag(t))
	op.waitReady(t)
	// The user guide's steps, with its examples.
	activate, tune := guideExample(t, "activate"), guideExample(t, "tune")
	c.applyOnceServed(t, activate)
	c.waitMetallb(t, release.MetalLB, 3*time.Minute)
	c.assertAdmittedUnder(t, false)
	if got := kubectl(t, c.Env, "get", "secret", "memberlist", "-n", "metallb-system", "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"); got != "cluster-network-operator" {
		t.Errorf("the memberlist Secret left by a hand install was not adopted: managed-by %q", got)
	}
	// Scraped as Prometheus would be: the operator asks the API server who the
	// token is and whether it may get /metrics.
	assertMetricsGuarded(t, c.Env, op)
	assertScrapeVerified(t, c.Env, op, serviceCA)
	assertMetrics(t, c.Env, op, []string{`cluster_network_operator_operand_active{operand="metallb"} 1`})
	c.installMonitoring(t)
	c.tellsInterfaceMissingBesideGuide(t)
	// A Service of the node-address mode's class, beside MetalLB, the mode
	// enabled: the nodes' addresses, written into its status. Tuning, which
	// leaves the mode out, turns it off again.
	kubectl(t, c.Env, "apply", "-f", guideExample(t, "node-address-mode"))
	kubectl(t, c.Env, "apply", "-f", guideExample(t, "node-address"))
	c.waitIngress(t, "web-on-nodes", time.Minute, c.nodeIPs())
	c.drainForUpdate(t, c.Nodes[1].Name) // node maintenance, as on OpenShift

	kubectl(t, c.Env, "apply", "-f", tune)
	c.waitPods(t, "MetalLB with --log-level=debug", 3*time.Minute, func(p *corev1.Pod) bool {
		return strings.Contains(strings.Join(p.Spec.Containers[0].Args, " "), "--log-level=debug")
	})
	c.waitClusterOperatorVersion(t, "4.22.0")
	c.switchToFRRK8s(t)
	c.assertAdmittedUnder(t, true)
	c.assertScrapesVerified(t, serviceCA)

	op = c.upgradeOntoOpenShiftsFRRK8s(t, op, "--kubeconfig="+kubeconfig, hung)

	kubectl(t, c.Env, "delete", "-f", tune, "-f", activate) // tune names the MetalLB object, now with frr-k8s
	c.waitRolesGone(t)
	op.stop(t)

	used := readAudit(t, c.Env.AuditLog, operatorAccount)
	grants := readGrants(t, manifestsDir)
	checkGrants(t, grants, used)
}

// tellsInterfaceMissingBesideGuide has the operator tell a Service no node
// can announce, reading whether it is announced. The guide's advertisement
// announces every pool, on every interface: it names its own pool meanwhile.
func (c *metallbCluster) tellsInterfaceMissingBesideGuide(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "patch", "l2advertisement", "lan", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"ipAddressPools":["lan"]}}`)
	c.tellsInterfaceMissing(t)
	kubectl(t, c.Env, "patch", "l2advertisement", "lan", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"ipAddressPools":null}}`)
}

// waitRolesGone waits until deactivation has deleted the roles the module
// rendered, and their bindings, the last objects it deletes, after the
// workloads: stopped before, the operator would not have used its delete
// permissions on them (run 81).
func (c *metallbCluster) waitRolesGone(t *testing.T) {
	t.Helper()
	c.waitWorkloadsGone(t)
	owned := manifests.Ownership.String()
	var left string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		left, _ = kubectlErr(c.Env, "get", "roles,rolebindings,clusterroles,clusterrolebindings", "-A", "-l", owned, "-o", "name")
		return strings.TrimSpace(left) == "", nil
	})
	if err != nil {
		t.Fatalf("deactivation left the module's roles:\n%s", left)
	}
}

// upgradeOntoOpenShiftsFRRK8s upgrades the operator with an OpenShift whose
// network operator now runs frr-k8s (its Network API, FRR enabled, its
// namespace): the upgraded operator moves the speakers to that frr-k8s, where
// they write their FRRConfigurations (for a BGPPeer made for it, then
// deleted), and removes its own, so that a node runs one FRR. It returns the
// upgraded operator.
func (c *metallbCluster) upgradeOntoOpenShiftsFRRK8s(t *testing.T, op *runningOperator, args ...string) *runningOperator {
	t.Helper()
	op.stop(t)
	enableOpenShiftsFRR(t, c.Env)
	op = startOperator(t, c.Env, cluster.Release("4.22.1", release.MetalLB+"-1"), args...)
	op.waitReady(t)
	c.waitMetallb(t, release.MetalLB+"-1", 5*time.Minute)
	c.waitClusterOperatorVersion(t, "4.22.1")
	c.waitSpeakersWithEnv(t, "FRRK8S_NAMESPACE", manifests.OpenShiftFRRK8sNamespace)
	// A peer, for the speakers to have something to tell FRR: its BGP sessions.
	peer := writeTemp(t, "apiVersion: metallb.io/v1beta2\nkind: BGPPeer\nmetadata:\n  name: router\n  namespace: metallb-system\n"+
		"spec:\n  myASN: 64500\n  peerASN: 64501\n  peerAddress: 192.0.2.3\n")
	// Applied once MetalLB's webhook, served by the controller just upgraded, answers.
	applyOnceServed(t, c.Env, peer)
	defer kubectl(t, c.Env, "delete", "-f", peer)
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 2*time.Minute, true, func(context.Context) (bool, error) {
		own, _ := kubectlErr(c.Env, "get", "daemonsets,deployments", "-n", metallbNamespace, "-o", "name")
		written, _ := kubectlErr(c.Env, "get", "frrconfigurations", "-n", manifests.OpenShiftFRRK8sNamespace, "-o", "name")
		return !strings.Contains(own, manifests.FRRK8sPrefix) && strings.Count(written, "\n") == len(c.Nodes), nil
	})
	if err != nil {
		t.Fatalf("frr-k8s still runs in %s, or the speakers wrote no FRRConfiguration in %s:\n%s", metallbNamespace,
			manifests.OpenShiftFRRK8sNamespace, kubectl(t, c.Env, "get", "daemonsets,deployments,frrconfigurations", "-A"))
	}
	return op
}

// installMonitoring creates prometheus-operator's CRDs, the operator
// running: MetalLB's ServiceMonitors and PrometheusRule appear, with what
// OpenShift's platform Prometheus needs, and edited they are put back; the
// operator's own ServiceMonitor applies.
func (c *metallbCluster) installMonitoring(t *testing.T) {
	t.Helper()
	c.createMonitoringCRDs(t)
	speakerPort, firstGroup := "jsonpath={.spec.endpoints[0].port}", "jsonpath={.spec.groups[0].name}"
	// The operator's own, from its manifests, as the CVO applies it: the real
	// CRD accepts it.
	kubectl(t, c.Env, "wait", "--for=condition=Established", "crd/servicemonitors.monitoring.coreos.com")
	kubectl(t, c.Env, "apply", "-f", "../../manifests/0000_70_metallb_07_servicemonitor.yaml")
	c.waitField(t, "prometheusrule/metallb", firstGroup, "metallb-configuration")
	// OpenShift's APIs are installed: its platform Prometheus is let in.
	c.waitField(t, "namespace/"+metallbNamespace, `jsonpath={.metadata.labels.openshift\.io/cluster-monitoring}`, "true")
	c.waitField(t, "rolebinding/prometheus-k8s", "jsonpath={.subjects[0].namespace}", "openshift-monitoring")
	// And workload partitioning places MetalLB's pods on the platform's CPUs.
	c.waitField(t, "namespace/"+metallbNamespace, `jsonpath={.metadata.annotations.workload\.openshift\.io/allowed}`, "management")
	c.waitField(t, "daemonset/speaker", `jsonpath={.spec.template.metadata.annotations.target\.workload\.openshift\.io/management}`,
		`{"effect": "PreferredDuringScheduling"}`)
	kubectl(t, c.Env, "patch", "servicemonitor", "speaker-monitor", "-n", metallbNamespace, "--type=merge",
		"-p", `{"spec":{"endpoints":[{"port":"edited"}]}}`)
	kubectl(t, c.Env, "patch", "prometheusrule", "metallb", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"groups":[]}}`)
	c.waitField(t, "servicemonitor/speaker-monitor", speakerPort, "metricshttps")
	c.waitField(t, "prometheusrule/metallb", firstGroup, "metallb-configuration")
}

// createMonitoringCRDs creates prometheus-operator's CRDs, and waits until
// the operator has given MetalLB its ServiceMonitors.
func (c *metallbCluster) createMonitoringCRDs(t *testing.T) {
	t.Helper()
	for _, crd := range testenv.MonitoringCRDs(t) {
		data, err := json.Marshal(crd.Object)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, c.Env, "create", "-f", writeTemp(t, string(data)))
	}
	c.waitField(t, "servicemonitor/speaker-monitor", "jsonpath={.spec.endpoints[0].port}", "metricshttps")
}

// waitField waits until a field of an object in metallb-system (kubectl's
// -o) reads want.
func (c *metallbCluster) waitField(t *testing.T, object, output, want string) {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 30*time.Second, true, func(context.Context) (bool, error) {
		out, _ = kubectlErr(c.Env, "get", object, "-n", metallbNamespace, "-o", output)
		return out == want, nil
	})
	if err != nil {
		t.Fatalf("%s %s is not %q within 30s: %q", object, output, want, out)
	}
}

// installFromManifests applies manifests/ as a user does (kubectl apply -k),
// and its OpenShift-only files, the ClusterOperator and the speakers' SCC, as
// the CVO does.
func (c *metallbCluster) installFromManifests(t *testing.T) {
	t.Helper()
	t.Logf("kubectl apply -k manifests/:\n%s", kubectl(t, c.Env, "apply", "-k", manifestsDir))
	kubectl(t, c.Env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml"),
		"-f", filepath.Join(manifestsDir, "0000_70_metallb_03_scc.yaml"))
}

// assertAdmittedUnder checks that the pods in MetalLB's namespace, those of
// frr-k8s with it, were admitted under the SCCs of their workloads
// (testenv.CheckAdmittedUnder).
func (c *metallbCluster) assertAdmittedUnder(t *testing.T, frrK8s bool) {
	t.Helper()
	want := map[string]string{manifests.ControllerName: manifests.ControllerSCC, manifests.SpeakerName: manifests.SpeakerSCC}
	if frrK8s {
		want[manifests.FRRK8sName], want[manifests.FRRK8sStatusCleaner] = manifests.FRRK8sSCC, manifests.FRRK8sStatusCleanerSCC
	}
	pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	problems, seen := testenv.CheckAdmittedUnder(pods.Items, want)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("pods admitted, by workload: %v; SCCs %v", seen, want)
}

// switchToFRRK8s applies the user guide's frr-k8s example: the frr-k8s
// backend, which the operator deploys and upgrades as an operand of its own.
func (c *metallbCluster) switchToFRRK8s(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "apply", "-f", guideExample(t, "frr-k8s"))
	c.waitFRRK8sSpeakers(t)
}

// waitFRRK8sSpeakers waits until every speaker runs with the frr-k8s backend
// (the operator changes them once frr-k8s is available on every node).
func (c *metallbCluster) waitFRRK8sSpeakers(t *testing.T) {
	t.Helper()
	c.waitSpeakersWithEnv(t, manifests.BGPTypeEnv, "frr-k8s")
}

// waitSpeakersWithEnv waits until every speaker runs with the environment
// variable set to value.
func (c *metallbCluster) waitSpeakersWithEnv(t *testing.T, name, value string) {
	t.Helper()
	c.waitPods(t, "speakers with "+name+"="+value, 3*time.Minute, func(p *corev1.Pod) bool {
		return p.Labels["component"] != "speaker" || slices.ContainsFunc(p.Spec.Containers[0].Env, func(e corev1.EnvVar) bool {
			return e.Name == name && e.Value == value
		})
	})
}

// installOpenShiftAPIs creates OpenShift's APIs that the operator reads and
// writes where they exist (the APIServer's, the real CRD, for its TLS
// profile), and a bare-metal Infrastructure; and runs the service CA, which
// every OpenShift cluster runs. It returns the file of the service CA's
// bundle.
func (c *metallbCluster) installOpenShiftAPIs(t *testing.T) string {
	t.Helper()
	serviceCA := c.Env.StartServiceCA(t)
	kubectl(t, c.Env, "apply", "-f", clusterOperatorsCRD, "-f", "testdata/infrastructures-crd.yaml", "-f", writeTemp(t, string(testenv.APIServerCRD)))
	kubectl(t, c.Env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io", "crd/infrastructures.config.openshift.io",
		"crd/apiservers.config.openshift.io")
	kubectl(t, c.Env, "apply", "-f", writeTemp(t, "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n  name: cluster\n"))
	kubectl(t, c.Env, "patch", "infrastructure", "cluster", "--subresource=status", "--type=merge", "-p", `{"status":{"platformStatus":{"type":"BareMetal"}}}`)
	return serviceCA
}

// metricsCertFlag gives the operator its metrics certificate, the service
// CA's for the manifests' Service, in a directory as the manifests'
// Deployment mounts it.
func (c *metallbCluster) metricsCertFlag(t *testing.T) string {
	t.Helper()
	return "--metrics-cert-dir=" + c.mountSecret(t, operatorNamespace, "metrics-serving-cert")
}

// mountSecret writes a Secret's files into a directory, as the kubelet mounts
// one, once it exists, and returns the directory.
func (c *metallbCluster) mountSecret(t *testing.T, namespace, name string) string {
	t.Helper()
	var secret *corev1.Secret
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		secret, err = c.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no Secret %s/%s", namespace, name)
	}
	dir := t.TempDir()
	for key, data := range secret.Data {
		write(t, filepath.Join(dir, key), string(data))
	}
	return dir
}

// assertScrapeVerified scrapes the operator as the ServiceMonitor of its
// manifests says: its certificate verified against the service CA's bundle,
// for its Service's name.
func assertScrapeVerified(t *testing.T, env *testenv.Env, op *runningOperator, serviceCA string) {
	t.Helper()
	roots := serviceCARoots(t, serviceCA)
	config := &tls.Config{RootCAs: roots, ServerName: "metrics." + operatorNamespace + ".svc"}
	if code, body, _ := scrapeWith(t, op.metrics, metricsToken(t, env, "verifying-reader", true), config); code != http.StatusOK {
		t.Errorf("a scrape verifying the operator's certificate got %d: %.300s", code, body)
	}
}

// serviceCARoots are the certificates of the service CA's bundle file.
func serviceCARoots(t *testing.T, bundle string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(bundle)
	roots := x509.NewCertPool()
	if err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("the service CA's bundle %s: %v", bundle, err)
	}
	return roots
}

// assertScrapesVerified has the real Prometheus scrape MetalLB and frr-k8s as
// the ServiceMonitors say on OpenShift: every target up, its certificate
// verified against the service CA's bundle for the name the ServiceMonitor
// gives; and a client expecting another name is refused by the same
// certificate.
func (c *metallbCluster) assertScrapesVerified(t *testing.T, serviceCA string) {
	t.Helper()
	p := c.startPrometheus(t, metricsToken(t, c.Env, "prometheus", true), serviceCA)
	p.waitTargetsUp(t, 1+len(c.Nodes)*3) // the controller; on each node the speaker, frr-k8s and FRR's exporter
	targets, err := p.targets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	roots := serviceCARoots(t, serviceCA)
	target, err := url.Parse(targets[0].ScrapeURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", target.Host, &tls.Config{RootCAs: roots, ServerName: "another." + metallbNamespace + ".svc"})
	if err == nil {
		conn.Close()
	}
	if hostname := (x509.HostnameError{}); !errors.As(err, &hostname) {
		t.Errorf("%s's certificate, for another name: %v, want refused for that name", target.Host, err)
	}
	t.Logf("SCRAPES VERIFIED: %d targets up, each verified against the service CA; %s's certificate refused for another name", len(targets), target.Host)
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the operator's
// service account, and nothing else.
func (c *metallbCluster) serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	return serviceAccountKubeconfig(t, c.Env)
}

func serviceAccountKubeconfig(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return tokenKubeconfig(t, env, strings.TrimSpace(kubectl(t, env, "create", "token", "cluster-network-operator", "-n", operatorNamespace, "--duration=2h")))
}

// tokenKubeconfig writes a kubeconfig of env's API server and a bearer token.
func tokenKubeconfig(t *testing.T, env *testenv.Env, token string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := testenv.WriteKubeconfig(file, admin.Clusters["testenv"], &clientcmdapi.AuthInfo{Token: token}); err != nil {
		t.Fatal(err)
	}
	return file
}

func (c *metallbCluster) waitClusterOperatorVersion(t *testing.T, version string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return clusterOperatorSettled(ctx, dynamicClient(t, c.Env), version), nil
	})
	if err != nil {
		t.Fatalf("the ClusterOperator never showed %s True False False:\n%s", version, kubectl(t, c.Env, "get", "clusteroperator", "metallb"))
	}
}
