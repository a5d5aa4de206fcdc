package operator

import (
	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// builtIn are the groups of the built-in kinds the operator reads or writes
// as Go types; the rest, MetalLB's rendered objects among them, it handles as
// unstructured objects or metadata, which need no scheme. client-go's whole
// scheme, some 60 group versions, would cost memory for kinds never read.
var builtIn = []func(*runtime.Scheme) error{
	corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, discoveryv1.AddToScheme,
	eventsv1.AddToScheme, networkingv1.AddToScheme, nodev1.AddToScheme, rbacv1.AddToScheme,
	schedulingv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
	apiextensionsv1.AddToScheme, configv1.Install,
}

// NewScheme returns the operator's scheme: the built-in kinds it uses, CRDs,
// OpenShift's config kinds (ClusterOperator, Infrastructure, APIServer), and
// each module's own. The tests use it too, so that they read as the operator
// does.
func NewScheme(modules ...Module) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range builtIn {
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
