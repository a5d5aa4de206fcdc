package operator

import (
	configv1 "github.com/openshift/api/config/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// NewScheme returns the operator's scheme: the built-in kinds, CRDs,
// OpenShift's config kinds (ClusterOperator, Infrastructure), and each
// module's own. The tests use it too, so that they read as the operator does.
func NewScheme(modules ...Module) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, configv1.Install} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	for _, m := range modules {
		if err := m.AddToScheme(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
