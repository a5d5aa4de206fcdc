package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// prometheus is the real Prometheus, built from its pinned module, scraping
// what the operator's ServiceMonitors name and evaluating its PrometheusRule.
type prometheus struct {
	addr string
	log  string
}

// alertFor is the `for` of every alert in the Prometheus the stories run:
// seconds, not minutes, so that a story sees an alert fire and resolve.
// promtool's unit tests (TestAlertRules) hold the real durations.
const alertFor = "5s"

// startPrometheus runs Prometheus with a scrape job for each endpoint of the
// ServiceMonitors in MetalLB's namespace, translated as prometheus-operator
// translates them (Kubernetes discovery of the EndpointSlices of the Services
// they select, on the port they name), authenticating with token; and with
// the groups of the PrometheusRules there, their `for` set to alertFor. On
// OpenShift serviceCA is the file of the service CA's bundle, which the
// platform's Prometheus holds where the ServiceMonitors say; elsewhere "".
func (c *metallbCluster) startPrometheus(t *testing.T, token, serviceCA string) *prometheus {
	t.Helper()
	bin, err := testenv.Binary("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	write(t, tokenFile, token)
	var jobs []any
	for _, sm := range c.listMonitoring(t, "servicemonitors") {
		jobs = append(jobs, scrapeJobs(t, sm, c.Env.Kubeconfig, tokenFile, serviceCA)...)
	}
	var groups []any
	for _, rule := range c.listMonitoring(t, "prometheusrules") {
		g, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
		groups = append(groups, shortenFor(g)...)
	}
	writeYAML(t, filepath.Join(dir, "rules.yaml"), map[string]any{"groups": groups})
	writeYAML(t, filepath.Join(dir, "prometheus.yaml"), map[string]any{
		// Scraping frr-metrics runs vtysh against FRR's daemons; on the loaded
		// test nodes that took over 2 s, and with a 2 s interval (the timeout
		// follows it) the scrapes failed for minutes and the session alert,
		// seeing no series, never fired. Prometheus's default is 10 s.
		"global":     map[string]any{"scrape_interval": "5s", "scrape_timeout": "5s", "evaluation_interval": "1s"},
		"rule_files": []any{filepath.Join(dir, "rules.yaml")}, "scrape_configs": jobs})
	p := &prometheus{addr: freeAddr(t), log: filepath.Join(dir, "prometheus.log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yaml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(p.log)
			t.Logf("Prometheus's log:\n%s", out)
		}
	})
	return p
}

// listMonitoring lists the monitoring objects of a resource in MetalLB's
// namespace.
func (c *metallbCluster) listMonitoring(t *testing.T, resource string) []*unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	if err := json.Unmarshal([]byte(kubectl(t, c.Env, "get", resource, "-n", metallbNamespace, "-o", "json")), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("no %s in %s", resource, metallbNamespace)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// scrapeJobs are the scrape configurations of a ServiceMonitor, one per
// endpoint, as prometheus-operator writes them for its Prometheus.
func scrapeJobs(t *testing.T, sm *unstructured.Unstructured, kubeconfig, tokenFile, serviceCA string) []any {
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	namespaces, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	var jobs []any
	for i, e := range endpoints {
		e := e.(map[string]any)
		var relabel []any
		for k, v := range selector {
			relabel = append(relabel, keep("__meta_kubernetes_service_label_"+sanitize(k), v))
		}
		relabel = append(relabel, keep("__meta_kubernetes_endpointslice_port_name", e["port"].(string)),
			copyLabel("__meta_kubernetes_namespace", "namespace"), copyLabel("__meta_kubernetes_pod_name", "pod"),
			copyLabel("__meta_kubernetes_service_name", "service"))
		honor, _, _ := unstructured.NestedBool(e, "honorLabels")
		jobs = append(jobs, map[string]any{
			"job_name":              fmt.Sprintf("serviceMonitor/%s/%s/%d", sm.GetNamespace(), sm.GetName(), i),
			"scheme":                e["scheme"],
			"honor_labels":          honor,
			"tls_config":            tlsConfig(t, e, serviceCA),
			"authorization":         map[string]any{"credentials_file": tokenFile},
			"kubernetes_sd_configs": []any{map[string]any{"role": "endpointslice", "kubeconfig_file": kubeconfig, "namespaces": map[string]any{"names": namespaces}}},
			"relabel_configs":       relabel,
		})
	}
	return jobs
}

// tlsConfig is a ServiceMonitor endpoint's tlsConfig as Prometheus takes it.
// Its CA file is OpenShift's service CA's bundle, there serviceCA.
func tlsConfig(t *testing.T, endpoint map[string]any, serviceCA string) map[string]any {
	t.Helper()
	insecure, _, _ := unstructured.NestedBool(endpoint, "tlsConfig", "insecureSkipVerify")
	caFile, _, _ := unstructured.NestedString(endpoint, "tlsConfig", "caFile")
	serverName, _, _ := unstructured.NestedString(endpoint, "tlsConfig", "serverName")
	config := map[string]any{"insecure_skip_verify": insecure}
	switch {
	case caFile == "":
	case caFile != manifests.ServiceCAFile || serviceCA == "":
		t.Fatalf("a ServiceMonitor verifies against %s, which this Prometheus does not hold", caFile)
	default:
		config["ca_file"], config["server_name"] = serviceCA, serverName
	}
	return config
}

func keep(label, value string) map[string]any {
	return map[string]any{"action": "keep", "source_labels": []any{label}, "regex": regexp.QuoteMeta(value)}
}

func copyLabel(from, to string) map[string]any {
	return map[string]any{"source_labels": []any{from}, "target_label": to}
}

// sanitize is Prometheus's label name for a Kubernetes label key.
func sanitize(key string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(key, "_")
}

// shortenFor sets the `for` of every alert of the groups to alertFor.
func shortenFor(groups []any) []any {
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if r := r.(map[string]any); r["for"] != nil {
				r["for"] = alertFor
			}
		}
		g.(map[string]any)["rules"] = rules
	}
	return groups
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(data))
}

// scrapeTarget is one of Prometheus's active targets, as its API lists them.
type scrapeTarget struct{ ScrapePool, ScrapeURL, Health, LastError string }

// targets lists Prometheus's active targets.
func (p *prometheus) targets(ctx context.Context) ([]scrapeTarget, error) {
	var got struct {
		Data struct {
			ActiveTargets []scrapeTarget `json:"activeTargets"`
		} `json:"data"`
	}
	err := p.get(ctx, "/api/v1/targets?state=active", &got)
	return got.Data.ActiveTargets, err
}

// waitTargetsUp waits until Prometheus scrapes n targets, each up.
func (p *prometheus) waitTargetsUp(t *testing.T, n int) {
	t.Helper()
	var targets []scrapeTarget
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if targets, err = p.targets(ctx); err != nil || len(targets) != n {
			return false, nil
		}
		return !slices.ContainsFunc(targets, func(tg scrapeTarget) bool { return tg.Health != "up" }), nil
	})
	if err != nil {
		t.Fatalf("Prometheus does not scrape %d targets, all up: %+v", n, targets)
	}
}

// waitAlert waits until the alert is firing, or, with firing false, until it
// is neither firing nor pending; it returns how long that took.
func (p *prometheus) waitAlert(t *testing.T, name string, firing bool, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var states []string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var got struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		if p.get(ctx, "/api/v1/alerts", &got) != nil {
			return false, nil
		}
		states = nil
		for _, a := range got.Data.Alerts {
			if a.Labels["alertname"] == name {
				states = append(states, a.State)
			}
		}
		if firing {
			return slices.Contains(states, "firing"), nil
		}
		return len(states) == 0, nil
	})
	if err != nil {
		targets, _ := p.targets(context.WithoutCancel(t.Context()))
		t.Fatalf("alert %s: want firing %t within %s; its states: %v; the targets: %+v", name, firing, timeout, states, targets)
	}
	return time.Since(start)
}

// get reads a JSON answer of Prometheus's HTTP API.
func (p *prometheus) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(into)
}
