package testenv

import (
	"bytes"
	_ "embed" // the CRDs below
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// APIServerCRD is OpenShift's APIServer API (apiservers.config.openshift.io),
// the CRD the pinned github.com/openshift/api ships, as YAML.
//
//go:embed crds/apiservers.config.openshift.io.yaml
var APIServerCRD []byte

// NetworkCRD is OpenShift's network operator API (networks.operator.openshift.io),
// the CRD the pinned github.com/openshift/api ships, as YAML.
//
//go:embed crds/networks.operator.openshift.io.yaml
var NetworkCRD []byte

// Decode decodes one object of YAML, for a test to create.
func Decode(t testing.TB, data []byte) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&o.Object); err != nil {
		t.Fatal(err)
	}
	return o
}
