package testenv

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// monitoringCRDFiles are prometheus-operator's CRDs that hack/tools.sh
// places from its pinned module.
var monitoringCRDFiles = []string{
	"monitoring.coreos.com_servicemonitors.yaml",
	"monitoring.coreos.com_podmonitors.yaml",
	"monitoring.coreos.com_prometheusrules.yaml",
}

// MonitoringCRDs returns prometheus-operator's CRDs of ServiceMonitor,
// PodMonitor and PrometheusRule, for a test to create.
func MonitoringCRDs(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	var crds []*unstructured.Unstructured
	for _, name := range monitoringCRDFiles {
		path, err := Binary(name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, Decode(t, data))
	}
	return crds
}
