package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

const (
	// alertTests are promtool's unit tests of the alerts.
	alertTests = "testdata/alerts/metallb.test.yaml"
	// runbooks are the alerts' runbooks, docs/runbooks/<alert>.md.
	runbooks   = "../../../../docs/runbooks"
	runbookURL = "https://github.com/bmlb/cluster-network-operator/blob/main/docs/runbooks/"
)

// The alerts the PrometheusRule carries pass promtool's checks and unit tests
// (testdata/alerts): each fires on its series after its `for`, and not before,
// and a healthy cluster's series fire none. Every alert has a severity, a
// summary, and a runbook in docs/runbooks that its runbook_url names.
func TestAlertRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs promtool: not run with -short")
	}
	promtool, err := testenv.Binary("promtool")
	if err != nil {
		t.Fatal(err)
	}
	groups := renderedRuleGroups(t)
	dir := t.TempDir()
	data, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(alertTests)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "rules.yaml"), data)
	writeFile(t, filepath.Join(dir, "tests.yaml"), tests)
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "tests.yaml"}} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
	tested := alertsFiring(t, tests)
	for _, r := range alertsOf(t, groups) {
		checkAlert(t, r, tested)
	}
}

// renderedRuleGroups are the rule groups of the PrometheusRule rendered where
// prometheus-operator's CRDs exist.
func renderedRuleGroups(t *testing.T) []any {
	t.Helper()
	for _, o := range (scenario{name: "monitoring", monitoring: true}).render(t) {
		if o.GetKind() == "PrometheusRule" {
			groups, _, err := unstructured.NestedSlice(o.Object, "spec", "groups")
			if err != nil || len(groups) == 0 {
				t.Fatalf("PrometheusRule %s has no groups: %v", o.GetName(), err)
			}
			return groups
		}
	}
	t.Fatal("no PrometheusRule rendered with monitoring on")
	return nil
}

type alertRule struct {
	Alert       string            `json:"alert"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func alertsOf(t *testing.T, groups []any) []alertRule {
	t.Helper()
	var spec struct {
		Groups []struct {
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	}
	data, _ := yaml.Marshal(map[string]any{"groups": groups})
	if err := yaml.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	var rules []alertRule
	for _, g := range spec.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// alertsFiring are the alerts promtool's tests expect to fire somewhere.
func alertsFiring(t *testing.T, tests []byte) []string {
	t.Helper()
	var file struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(tests, &file); err != nil {
		t.Fatal(err)
	}
	var firing []string
	for _, tc := range file.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing = append(firing, a.Alertname)
			}
		}
	}
	return firing
}

func checkAlert(t *testing.T, r alertRule, tested []string) {
	t.Helper()
	if !slices.Contains(tested, r.Alert) {
		t.Errorf("%s: no test of %s fires it", alertTests, r.Alert)
	}
	if s := r.Labels["severity"]; s != "warning" && s != "critical" {
		t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
	}
	if r.Annotations["summary"] == "" {
		t.Errorf("%s has no summary", r.Alert)
	}
	if got, want := r.Annotations["runbook_url"], runbookURL+r.Alert+".md"; got != want {
		t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
	}
	if _, err := os.Stat(filepath.Join(runbooks, r.Alert+".md")); err != nil {
		t.Errorf("%s has no runbook: %v", r.Alert, err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
