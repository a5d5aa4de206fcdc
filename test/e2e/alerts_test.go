package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/bindata"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// target is an endpoint one of the operator's ServiceMonitors has Prometheus
// scrape: the pods of a selector, on a port.
type target struct {
	selector string
	port     int
}

// alertInputs are, by backend, what the alerts read off the real binaries:
// the scrape targets, and the series that must be among what they export.
var alertInputs = map[string]struct {
	targets []target
	series  []string
}{
	"native": {
		targets: []target{{"component=controller", 9120}, {"component=speaker", 9120}},
		series: []string{"metallb_k8s_client_config_loaded_bool", "metallb_k8s_client_config_stale_bool",
			"metallb_allocator_addresses_total", "metallb_allocator_addresses_in_use_total", "metallb_bgp_session_up"},
	},
	"frr-k8s": {
		targets: []target{{"component=controller", 9120}, {"component=speaker", 9120}, {"app=frr-k8s", 9140}, {"app=frr-k8s", 9141}},
		series: []string{"metallb_k8s_client_config_loaded_bool", "metallb_k8s_client_config_stale_bool",
			"metallb_allocator_addresses_total", "metallb_allocator_addresses_in_use_total", "frrk8s_bgp_session_up"},
	},
}

// assertAlertsSilent scrapes, as the operator's ServiceMonitors have
// Prometheus do, the real MetalLB (and frr-k8s) of a cluster announcing by
// BGP with every session up, and the operator, and has promtool evaluate the
// alert rules on those series held for an hour: no alert fires, and the
// series the alerts read are there, named and labelled as the binaries export
// them.
func (c *bgpCluster) assertAlertsSilent(t *testing.T, op *runningOperator, backend, token string) {
	t.Helper()
	in := alertInputs[backend]
	var series []string
	for _, tg := range in.targets {
		series = append(series, c.scrapeTargets(t, tg, token)...)
	}
	code, body := op.scrape(t, token)
	if code != 200 {
		t.Fatalf("scraping the operator: %d %.200s", code, body)
	}
	series = append(series, samples(t, body, map[string]string{"namespace": operatorNamespace, "pod": "cluster-network-operator"})...)
	for _, name := range append(in.series, "cluster_network_operator_operand_condition", "cluster_network_operator_rollout_pods") {
		if !slices.ContainsFunc(series, func(s string) bool { return strings.HasPrefix(s, name+"{") }) {
			t.Errorf("no %s among the %d series scraped: an alert reads it", name, len(series))
		}
	}
	runPromtoolSilent(t, series)
}

// scrapeTargets scrapes every pod of a target.
func (c *bgpCluster) scrapeTargets(t *testing.T, tg target, token string) []string {
	t.Helper()
	pods := c.podsOf(t, tg.selector)
	if len(pods) == 0 {
		t.Fatalf("no pods %s", tg.selector)
	}
	var series []string
	for _, p := range pods {
		code, body := scrapeMetrics(t, net.JoinHostPort(p.Status.PodIP, fmt.Sprint(tg.port)), token)
		if code != 200 {
			t.Fatalf("scraping %s (%s): %d %.200s", p.Name, tg.selector, code, body)
		}
		series = append(series, samples(t, body, map[string]string{"namespace": metallbNamespace, "pod": p.Name})...)
	}
	return series
}

// alertedPrefixes are those of the metrics the alerts read: the others (Go's,
// controller-runtime's) are left out of promtool's input.
var alertedPrefixes = []string{"metallb_", "frrk8s_", "cluster_network_operator_"}

// samples are the gauges and counters of a scrape that the alerts may read, as
// promtool's input series, "name{labels} value", with the labels a
// ServiceMonitor's scrape adds.
func samples(t *testing.T, body string, target map[string]string) []string {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing a scrape: %v", err)
	}
	var out []string
	for name, f := range families {
		if !slices.ContainsFunc(alertedPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		for _, m := range f.Metric {
			value, ok := sampleValue(f.GetType(), m)
			if !ok {
				continue
			}
			labels := maps.Clone(target)
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			var pairs []string
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				pairs = append(pairs, fmt.Sprintf("%s=%q", k, labels[k]))
			}
			out = append(out, fmt.Sprintf("%s{%s} %s", name, strings.Join(pairs, ", "), strconv.FormatFloat(value, 'f', -1, 64)))
		}
	}
	slices.Sort(out)
	return out
}

func sampleValue(typ dto.MetricType, m *dto.Metric) (float64, bool) {
	switch typ {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// runPromtoolSilent has promtool evaluate the operator's alert rules on the
// series, each held at its value for an hour: no alert may fire.
func runPromtoolSilent(t *testing.T, series []string) {
	t.Helper()
	promtool, err := testenv.Binary("promtool")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := fs.ReadFile(bindata.FS, manifests.AlertRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []map[string]string
	for _, s := range series {
		i := strings.LastIndexByte(s, ' ')
		inputs = append(inputs, map[string]string{"series": s[:i], "values": s[i+1:] + "x60"})
	}
	var checks []map[string]any
	for _, alert := range alertNames(t, rules) {
		checks = append(checks, map[string]any{"eval_time": "60m", "alertname": alert, "exp_alerts": []any{}})
	}
	tests, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m",
		"tests": []any{map[string]any{"interval": "1m", "input_series": inputs, "alert_rule_test": checks}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"rules.yaml": rules, "tests.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), promtool, "test", "rules", "tests.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("an alert fires on the series of a healthy cluster (%d series): %v\n%s", len(series), err, out)
	}
}

func alertNames(t *testing.T, rules []byte) []string {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
		}
	}
	return names
}

// sessionAlerts are, by backend, the alert for a BGP session down.
var sessionAlerts = map[string]string{"native": "MetalLBBGPSessionDown", "frr-k8s": "FRRK8sBGPSessionDown"}

// assertSessionAlertFiresAndResolves has the real Prometheus scrape MetalLB
// (and frr-k8s) as the ServiceMonitors the operator renders say, with their
// PrometheusRule: every target is up and the backend's session alert silent;
// the router's bgpd stopped, the alert fires; started again, it resolves.
func (c *bgpCluster) assertSessionAlertFiresAndResolves(t *testing.T, backend, token string) {
	t.Helper()
	c.createMonitoringCRDs(t)
	targets := 0
	for _, tg := range alertInputs[backend].targets {
		targets += len(c.podsOf(t, tg.selector))
	}
	p := c.startPrometheus(t, token, "")
	p.waitTargetsUp(t, targets)
	alert := sessionAlerts[backend]
	p.waitAlert(t, alert, false, 30*time.Second)
	if backend == "frr-k8s" {
		c.connectEvery5s(t)
	}
	if err := c.router.StopBGP(); err != nil {
		t.Fatal(err)
	}
	fired := p.waitAlert(t, alert, true, 2*time.Minute)
	if err := c.router.StartBGP(); err != nil {
		t.Fatal(err)
	}
	resolved := p.waitAlert(t, alert, false, 3*time.Minute)
	t.Logf("PROMETHEUS: %d targets up; %s fired %s after the router stopped (its for: %s), resolved %s after it started again",
		targets, alert, fired.Round(time.Second), alertFor, resolved.Round(time.Second))
}

// podsOf lists MetalLB's pods of a label selector.
func (c *bgpCluster) podsOf(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// connectEvery5s sets the BGPPeer's connectTime to 5 s, and waits until the
// speakers have given it to frr-k8s: FRR tries a peer that went away again
// every 120 s by default (MetalLB's native speakers back off from 1 s).
func (c *bgpCluster) connectEvery5s(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "patch", "bgppeer.v1beta2.metallb.io", "router", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"connectTime":"5s"}}`)
	want := strings.TrimSpace(strings.Repeat("5s ", len(c.Nodes)))
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 30*time.Second, true, func(context.Context) (bool, error) {
		got, _ = kubectlErr(c.Env, "get", "frrconfigurations", "-n", metallbNamespace, "-o", "jsonpath={.items[*].spec.bgp.routers[*].neighbors[*].connectTime}")
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("the FRRConfigurations' connect times are %q, want %q", got, want)
	}
}
