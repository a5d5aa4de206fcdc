package manifests

import (
	"maps"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
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
	// SpeakersMoveOntoFRRK8s tells that the speakers are moving from native
	// BGP onto frr-k8s: each node counts as done only once its new BGP session
	// has had time to come up. The plan decides it from what runs.
	SpeakersMoveOntoFRRK8s bool
	// FailureDetection is the speakers' memberlist timing.
	FailureDetection v1beta1.FailureDetectionProfile
	// NodeAddress is the node-address mode's setting, nil when unset.
	NodeAddress *v1beta1.NodeAddress
	// NetworkPolicies has the NetworkPolicies of MetalLB's namespace rendered.
	NetworkPolicies bool
	// TLS is the profile of the TLS endpoints of MetalLB's and frr-k8s's pods.
	TLS tlsprofile.Profile
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
	// SCCAdmission tells that the API server admits pods by OpenShift's
	// SecurityContextConstraints (their kind is served): each pod names its
	// SCC, granted by a Role (scc.go).
	SCCAdmission bool
	// PlatformFRRK8s is the frr-k8s the platform runs, nil where it runs none.
	PlatformFRRK8s *PlatformFRRK8s
	// ClusterTLSProfile is the cluster's TLS security profile (on OpenShift,
	// the APIServer's spec.tlsSecurityProfile), nil where there is none.
	ClusterTLSProfile *configv1.TLSSecurityProfile
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
		s.TLS, _ = TLSProfileFor(env, nil) // the cluster's is always usable
		return s, nil
	}
	errs := checkTyped(obj)
	errs = append(errs, checkPodFields(&obj.Spec)...)
	tls, err := TLSProfileFor(env, obj.Spec.TLSSecurityProfile)
	if fe, ok := err.(*field.Error); ok {
		errs = append(errs, fe)
	}
	if err := errs.ToAggregate(); err != nil {
		return Settings{}, err
	}
	applySpec(&s, &obj.Spec)
	if err := checkPlatformFRRK8s(s, &obj.Spec).ToAggregate(); err != nil {
		return Settings{}, err
	}
	s.TLS = tls
	return s, nil
}

// TLSProfileFor is the TLS profile of MetalLB's and frr-k8s's endpoints, and
// of the operator's: the MetalLB object's (own), else the cluster's, else
// tlsprofile.Default. An error names the field of own that is wrong. A
// cluster profile no Go server can take counts as unset, as OpenShift's own
// operators (library-go's) take it.
func TLSProfileFor(env Environment, own *configv1.TLSSecurityProfile) (tlsprofile.Profile, error) {
	if own != nil {
		return tlsprofile.Of(own, field.NewPath("spec", "tlsSecurityProfile"))
	}
	if p, err := tlsprofile.Of(env.ClusterTLSProfile, field.NewPath("spec", "tlsSecurityProfile")); err == nil {
		return p, nil
	}
	return tlsprofile.Of(nil, nil)
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
