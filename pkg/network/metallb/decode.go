package metallb

import (
	"errors"
	"fmt"

	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// DecodeMetalLB reads a MetalLB tuning object from YAML or JSON. Unknown and
// duplicate fields are errors, and field names are case-sensitive, as in the
// API server: a misspelt setting is never silently ignored.
func DecodeMetalLB(data []byte) (*v1beta1.MetalLB, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	obj := &v1beta1.MetalLB{}
	strict, err := json.UnmarshalStrict(j, obj, json.DisallowDuplicateFields, json.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(strict...); err != nil {
		return nil, err
	}
	if gvk := obj.GroupVersionKind(); gvk != v1beta1.GroupVersion.WithKind("MetalLB") {
		return nil, fmt.Errorf("want a %s MetalLB, got apiVersion %q kind %q", v1beta1.GroupVersion, obj.APIVersion, obj.Kind)
	}
	return obj, nil
}
