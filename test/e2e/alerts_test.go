package e2e

import (
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

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
func (c *bgpCluster) assertAlertsSilent(t *testing.T, op *runningOperator, backend string) {
	t.Helper()
	token := metricsToken(t, c.Env, "prometheus", true)
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
	pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: tg.selector})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods %s: %d, %v", tg.selector, len(pods.Items), err)
	}
	var series []string
	for _, p := range pods.Items {
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
