package manifests

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// Settings is everything that shapes MetalLB's manifests. It is built from the
// MetalLB object (or its absence) and the operator's environment.
type Settings struct {
	Environment
	LogLevel          v1beta1.LogLevel
	LoadBalancerClass string
	BGPBackend        v1beta1.BGPBackend
	// FRRK8sAlwaysBlock are the prefixes frr-k8s refuses from every peer.
	FRRK8sAlwaysBlock []string
	Controller        Component
	Speaker           Component
	// MaxUnavailable paces the speaker DaemonSet's rolling updates.
	MaxUnavailable intstr.IntOrString
	// FailureDetection is the speakers' memberlist timing.
	FailureDetection v1beta1.FailureDetectionProfile
	// NodeAddress is the node-address mode's setting, nil when unset.
	NodeAddress *v1beta1.NodeAddress
	// NetworkPolicies has the NetworkPolicies of MetalLB's namespace rendered.
	NetworkPolicies bool
}

// Environment is what the operator's flags and environment, and the cluster's
// APIs, decide, as opposed to the MetalLB object.
type Environment struct {
	Namespace string
	Images    Images
	// Webhooks has the controller serve MetalLB's validating webhooks. Without
	// them MetalLB's objects are checked by nothing but their CRDs' schemas.
	Webhooks bool
	// Monitoring tells that prometheus-operator's CRDs of MonitoringKinds
	// exist: the monitoring objects are rendered.
	Monitoring bool
	// OpenShift tells that the cluster is OpenShift (its Infrastructure API
	// exists): with Monitoring, the namespace is labelled for the platform's
	// Prometheus, and its service account may read the scrape targets.
	OpenShift bool
}

// Component is what the user may set for the pods of the controller or the speakers.
type Component struct {
	NodeSelector      map[string]string
	Tolerations       []corev1.Toleration
	PriorityClassName string
	RuntimeClassName  string
	Affinity          *corev1.Affinity
	Annotations       map[string]string
	Resources         *corev1.ResourceRequirements
}

// SettingsFor returns the settings for a MetalLB object; nil means
// there is none, and every setting keeps MetalLB's default. The object is
// checked as the API server checks it (its CRD's schema and rules) and for
// what no schema can say but references (see validation.go): an error names
// each invalid field of the object.
func SettingsFor(env Environment, obj *v1beta1.MetalLB) (Settings, error) {
	s := Settings{
		Environment:      env,
		LogLevel:         v1beta1.LogLevelInfo,
		BGPBackend:       v1beta1.BGPBackendNative,
		MaxUnavailable:   intstr.FromInt32(1),
		FailureDetection: v1beta1.FailureDetectionDefault,
		NetworkPolicies:  true,
	}
	if obj == nil {
		return s, nil
	}
	errs := checkTyped(obj)
	errs = append(errs, checkPodFields(&obj.Spec)...)
	if err := errs.ToAggregate(); err != nil {
		return Settings{}, err
	}
	applySpec(&s, &obj.Spec)
	return s, nil
}

// applySpec copies the fields the user set over the defaults.
func applySpec(s *Settings, spec *v1beta1.MetalLBSpec) {
	if spec.LogLevel != "" {
		s.LogLevel = spec.LogLevel
	}
	if spec.BGPBackend != "" {
		s.BGPBackend = spec.BGPBackend
	}
	s.LoadBalancerClass = spec.LoadBalancerClass
	if spec.FRRK8sConfig != nil {
		s.FRRK8sAlwaysBlock = spec.FRRK8sConfig.AlwaysBlock
	}
	if fd := spec.FailureDetection; fd != nil && fd.Profile != "" {
		s.FailureDetection = fd.Profile
	}
	s.NodeAddress = spec.NodeAddress
	if np := spec.NetworkPolicies; np != nil && np.Mode == v1beta1.NetworkPoliciesDisabled {
		s.NetworkPolicies = false
	}
	s.Speaker.NodeSelector = spec.NodeSelector.Labels()
	s.Speaker.Tolerations = spec.SpeakerTolerations.Core()
	s.Controller.NodeSelector = spec.ControllerNodeSelector.Labels()
	s.Controller.Tolerations = spec.ControllerTolerations.Core()
	if c := spec.ControllerConfig; c != nil {
		applyConfig(&s.Controller, c)
	}
	if c := spec.SpeakerConfig; c != nil {
		applyConfig(&s.Speaker, &c.Config)
		if c.MaxUnavailable != nil {
			s.MaxUnavailable = *c.MaxUnavailable
		}
	}
}

func applyConfig(c *Component, cfg *v1beta1.Config) {
	c.PriorityClassName = string(cfg.PriorityClassName)
	c.RuntimeClassName = string(cfg.RuntimeClassName)
	c.Affinity = cfg.Affinity
	c.Annotations = maps.Clone(cfg.Annotations)
	c.Resources = cfg.Resources
}
