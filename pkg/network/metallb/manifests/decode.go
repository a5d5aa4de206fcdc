package manifests

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// DecodeMetalLB reads a MetalLB object from YAML or JSON, as the API
// server reads one with strict field validation (kubectl's default): duplicate
// and unknown fields are errors, and so is anything the CRD's schema and rules
// refuse, with the API server's field paths.
func DecodeMetalLB(data []byte) (*v1beta1.MetalLB, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	var u map[string]any
	if err := utiljson.Unmarshal(j, &u); err != nil { // numbers as the API server reads them
		return nil, err
	}
	if apiVersion, kind := u["apiVersion"], u["kind"]; apiVersion != v1beta1.GroupVersion.String() || kind != "MetalLB" {
		return nil, fmt.Errorf("want a %s MetalLB, got apiVersion %v kind %v", v1beta1.GroupVersion, apiVersion, kind)
	}
	unknown, errs := checkSchema(u)
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown field %q", strings.Join(unknown, `", "`))
	}
	if err := errs.ToAggregate(); err != nil {
		return nil, err
	}
	obj := &v1beta1.MetalLB{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
