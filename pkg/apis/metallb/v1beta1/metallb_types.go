package v1beta1

import (
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// LogLevel is how much MetalLB's controller and speakers log.
// +kubebuilder:validation:Enum=all;debug;info;warn;error;none
type LogLevel string

// Log levels MetalLB's binaries accept.
const (
	LogLevelAll   LogLevel = "all"
	LogLevelDebug LogLevel = "debug"
	LogLevelInfo  LogLevel = "info"
	LogLevelWarn  LogLevel = "warn"
	LogLevelError LogLevel = "error"
	LogLevelNone  LogLevel = "none"
)

// BGPBackend is the BGP implementation MetalLB runs.
// +kubebuilder:validation:Enum=native;frr;frr-k8s;frr-k8s-external
type BGPBackend string

// BGP backends of the upstream operator.
const (
	BGPBackendNative         BGPBackend = "native"
	BGPBackendFRR            BGPBackend = "frr"
	BGPBackendFRRK8s         BGPBackend = "frr-k8s"
	BGPBackendFRRK8sExternal BGPBackend = "frr-k8s-external"
)

// MetalLBSpec tunes how MetalLB runs. Every field is optional; an absent field
// keeps MetalLB's own default. The shape is the upstream metallb-operator's, so
// an object written for it keeps working.
type MetalLBSpec struct {
	// Image is the upstream operator's deprecated field; it has no effect here
	// either: the images come with the operator's release.
	// +optional
	Image string `json:"image,omitempty"`

	// NodeSelector limits the speaker DaemonSet to matching nodes.
	// +optional
	NodeSelector NodeSelector `json:"nodeSelector,omitempty"`

	// SpeakerTolerations let speakers run on tainted nodes, in addition to the
	// control-plane taints they always tolerate.
	// +optional
	SpeakerTolerations Tolerations `json:"speakerTolerations,omitempty"`

	// ControllerNodeSelector limits the controller Deployment to matching nodes.
	// +optional
	ControllerNodeSelector NodeSelector `json:"controllerNodeSelector,omitempty"`

	// ControllerTolerations let the controller run on tainted nodes.
	// +optional
	ControllerTolerations Tolerations `json:"controllerTolerations,omitempty"`

	// LogLevel of the controller and the speakers: all, debug, info, warn, error
	// or none. Default: info.
	// +optional
	LogLevel LogLevel `json:"logLevel,omitempty"`

	// LoadBalancerClass makes MetalLB serve only Services of this class, a
	// label-style name such as "example.com/internal-vip". Default: Services
	// without a class.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="must be a label-style name: an optional DNS subdomain and /, then at most 63 letters, digits, -, _ or . that begin and end with a letter or digit"
	LoadBalancerClass string `json:"loadBalancerClass,omitempty"`

	// BGPBackend is the BGP implementation: native (the default), MetalLB's own
	// BGP speaker; or frr-k8s, FRR driven by frr-k8s, which the operator deploys
	// beside the speakers (IPv6 and BFD sessions, graceful restart). frr and
	// frr-k8s-external, which the upstream operator knows, are refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['native', 'frr-k8s']",messageExpression="self == 'frr' ? 'frr (FRR inside the speaker pods) is deprecated by MetalLB and not offered: use frr-k8s, the same FRR run beside the speakers' : 'frr-k8s-external (an frr-k8s deployed by someone else) is not offered: use frr-k8s, which this operator deploys and upgrades with MetalLB'"
	BGPBackend BGPBackend `json:"bgpBackend,omitempty"`

	// ControllerConfig tunes the controller's pods.
	// +optional
	ControllerConfig *Config `json:"controllerConfig,omitempty"`

	// SpeakerConfig tunes the speakers' pods and their rolling updates.
	// +optional
	SpeakerConfig *SpeakerConfig `json:"speakerConfig,omitempty"`

	// FRRK8sConfig configures the frr-k8s backend.
	// +optional
	FRRK8sConfig *FRRK8sConfig `json:"frrk8sConfig,omitempty"`

	// FailureDetection is how fast the speakers notice that one of them is gone
	// (a node died, lost its network, or its speaker was killed), which is how
	// long its layer-2 addresses go unanswered before another node takes them.
	// A field of this operator's; the upstream operator has none.
	// +optional
	FailureDetection *FailureDetection `json:"failureDetection,omitempty"`

	// NodeAddress is the node-address mode: LoadBalancer Services get the
	// addresses of the nodes that can take their traffic, and the cluster's
	// kube-proxy (or its CNI) carries it; no address pool is needed. While
	// the mode is on it serves Services of the class
	// networkoperator.openshift.io/node-address, and Services with no class
	// unless MetalLB serves them; while it is off it serves none. A field of
	// this operator's; the upstream operator has none.
	// +optional
	NodeAddress *NodeAddress `json:"nodeAddress,omitempty"`

	// Maintenance moves MetalLB's announcements off a node being taken down
	// for maintenance (a drain before a reboot), and back once it has
	// returned: the operator labels the node
	// node.kubernetes.io/exclude-from-external-load-balancers, which the
	// speakers honour, and takes off only the labels it put. It never takes
	// the last node that could announce for an advertisement. A field of this
	// operator's; the upstream operator has none.
	// +optional
	Maintenance *Maintenance `json:"maintenance,omitempty"`

	// NetworkPolicies are the NetworkPolicies the operator puts in MetalLB's
	// namespace: a default deny, and what MetalLB's pods need allowed. A field
	// of this operator's; the upstream operator has none.
	// +optional
	NetworkPolicies *NetworkPolicies `json:"networkPolicies,omitempty"`

	// TLSSecurityProfile is the TLS profile of every TLS endpoint of MetalLB's
	// and frr-k8s's pods (their metrics and webhooks) and of the operator's
	// metrics endpoint: Old, Intermediate, Modern or Custom, as OpenShift's
	// apiservers.config.openshift.io spec.tlsSecurityProfile says them. When
	// unset: on OpenShift, the cluster's (that APIServer's); elsewhere
	// Intermediate. A change rolls MetalLB's pods as an upgrade does, one
	// speaker at a time by default. A field of this operator's; the upstream
	// operator has none.
	// +optional
	TLSSecurityProfile *configv1.TLSSecurityProfile `json:"tlsSecurityProfile,omitempty"`
}

// NetworkPoliciesMode tells whether the operator renders NetworkPolicies.
// +kubebuilder:validation:Enum=Enabled;Disabled
type NetworkPoliciesMode string

// Network policy modes.
const (
	// NetworkPoliciesEnabled isolates MetalLB's pods: a default-deny policy
	// for every pod of MetalLB's namespace, and policies that allow what
	// MetalLB's pods serve and reach (docs/user-guide.md lists them).
	NetworkPoliciesEnabled NetworkPoliciesMode = "Enabled"
	// NetworkPoliciesDisabled renders none, and removes those the operator
	// rendered; NetworkPolicies the user wrote are left alone.
	NetworkPoliciesDisabled NetworkPoliciesMode = "Disabled"
)

// NetworkPolicies configures the NetworkPolicies of MetalLB's namespace.
type NetworkPolicies struct {
	// Mode is Enabled or Disabled. Default: Enabled.
	// +optional
	Mode NetworkPoliciesMode `json:"mode,omitempty"`
}

// NodeAddressMode tells whether the node-address mode is on.
// +kubebuilder:validation:Enum=Enabled;Disabled
type NodeAddressMode string

// Node-address modes.
const (
	// NodeAddressEnabled turns the mode on: it serves its class, and Services
	// with no class while MetalLB does not. A MetalLB object that enables it
	// does not by itself deploy MetalLB: that takes a configuration object,
	// such as an IPAddressPool.
	NodeAddressEnabled NodeAddressMode = "Enabled"
	// NodeAddressDisabled turns the mode off: Services of its class stay
	// pending, those with no class are left to MetalLB, or pending.
	NodeAddressDisabled NodeAddressMode = "Disabled"
)

// NodeAddressType is which of a node's addresses the mode publishes.
// +kubebuilder:validation:Enum=ExternalIP;InternalIP
type NodeAddressType string

// Node address types the mode publishes.
const (
	NodeExternalIP NodeAddressType = "ExternalIP"
	NodeInternalIP NodeAddressType = "InternalIP"
)

// NodeAddress configures the node-address mode.
type NodeAddress struct {
	// Mode is Enabled or Disabled. Default: Enabled on a single-node cluster,
	// Disabled on others (docs/user-guide.md says why).
	// +optional
	Mode NodeAddressMode `json:"mode,omitempty"`

	// AddressType is ExternalIP or InternalIP: which of its addresses each
	// node publishes. Default: a node's ExternalIP addresses where it has
	// any, else its InternalIP addresses.
	// +optional
	AddressType NodeAddressType `json:"addressType,omitempty"`
}

// MaintenanceMode tells whether the operator moves announcements off nodes
// being taken down.
// +kubebuilder:validation:Enum=Enabled;Disabled
type MaintenanceMode string

// Maintenance modes.
const (
	MaintenanceEnabled  MaintenanceMode = "Enabled"
	MaintenanceDisabled MaintenanceMode = "Disabled"
)

// Maintenance says what tells that a node is being taken down. On OpenShift
// the machine-config daemon's drain request always does, while the mode is
// Enabled.
type Maintenance struct {
	// Mode is Enabled or Disabled. Default: Enabled on OpenShift, and
	// elsewhere where a signal below is named; Disabled otherwise. Disabled
	// takes off every label the operator put.
	// +optional
	Mode MaintenanceMode `json:"mode,omitempty"`

	// NodeLabels are labels a node carries while a tool takes it down: a
	// key, of any value, or key=value, that value only (kured sets
	// --pre-reboot-node-labels before a reboot and can only set another
	// value after it, --post-reboot-node-labels).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	NodeLabels []string `json:"nodeLabels,omitempty"`

	// NodeTaints are keys of taints a node carries while it is taken down.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	NodeTaints []string `json:"nodeTaints,omitempty"`

	// Cordon, when true, has a cordoned node (spec.unschedulable) count as
	// being taken down. Default false: a cordon alone keeps new pods off a
	// node that goes on serving.
	// +optional
	Cordon bool `json:"cordon,omitempty"`
}

// FailureDetectionProfile names a timing of the speakers' memberlist cluster.
// +kubebuilder:validation:Enum=Default;Fast
type FailureDetectionProfile string

// Failure detection profiles (docs/metallb-object.md says what each trades).
const (
	// FailureDetectionDefault is MetalLB's: memberlist's LAN timing, a dead node's
	// addresses move within about 5 to 8 s.
	FailureDetectionDefault FailureDetectionProfile = "Default"
	// FailureDetectionFast moves them within about 2 s, at five times the probe
	// traffic, and tolerates about 1 s of silence from a speaker.
	FailureDetectionFast FailureDetectionProfile = "Fast"
)

// FailureDetection chooses the speakers' failure detection.
type FailureDetection struct {
	// Profile is Default (MetalLB's own timing) or Fast. A change restarts the
	// speakers one by one, as an upgrade does. Default: Default.
	// +optional
	Profile FailureDetectionProfile `json:"profile,omitempty"`
}

// Config tunes the pods of one MetalLB component.
type Config struct {
	// PriorityClassName of the pods; the PriorityClass must exist.
	// +optional
	PriorityClassName ClassName `json:"priorityClassName,omitempty"`

	// RuntimeClassName of the pods; the RuntimeClass must exist.
	// +optional
	RuntimeClassName ClassName `json:"runtimeClassName,omitempty"`

	// Affinity of the pods.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.nodeAffinity) || !has(self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",message="weights must be from 1 to 100",fieldPath=".nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAffinity) || !has(self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",message="weights must be from 1 to 100",fieldPath=".podAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAntiAffinity) || !has(self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",message="weights must be from 1 to 100",fieldPath=".podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Annotations added to the pods.
	// +optional
	Annotations Annotations `json:"annotations,omitempty"`

	// Resources of the component's main container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// SpeakerConfig tunes the speaker DaemonSet.
type SpeakerConfig struct {
	Config `json:",inline"`

	// MaxUnavailable is how many speakers a rolling update may take down at
	// once: a number, or a percentage of the nodes such as "10%". Default: 1.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",message="must be a number of at least 1, or a percentage from 1% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// FRRK8sConfig is the upstream operator's frr-k8s configuration.
type FRRK8sConfig struct {
	// AlwaysBlock lists CIDRs whose incoming routes frr-k8s always refuses,
	// whatever any FRRConfiguration allows.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="each entry must be a CIDR such as 192.0.2.0/24 or 2001:db8::/32"
	AlwaysBlock []string `json:"alwaysBlock,omitempty"`
	// Namespace frr-k8s runs in, in the upstream operator's frr-k8s-external
	// mode; it has no effect here, where frr-k8s runs in MetalLB's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// MetalLBStatus is what the operator reports.
type MetalLBStatus struct {
	// Conditions: Available, Progressing, Degraded, Upgradeable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Version is the release of MetalLB that runs on every node.
	// +optional
	Version string `json:"version,omitempty"`

	// AppliedSpec is the spec the operator last found valid. While spec is
	// invalid, MetalLB keeps running as this asks; it survives operator restarts.
	// It is kept as the operator wrote it, without the spec's schema.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	AppliedSpec *runtime.RawExtension `json:"appliedSpec,omitempty"`

	// Maintenance lists the nodes being taken down for maintenance: those
	// the operator took out of MetalLB's announcements, and those it keeps
	// in them, being the last that could announce for an advertisement.
	// +optional
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=10000
	Maintenance []NodeMaintenance `json:"maintenance,omitempty"`
}

// NodeMaintenanceState says where a node in maintenance stands.
type NodeMaintenanceState string

// Node maintenance states.
const (
	// NodeOut: MetalLB's announcements left the node.
	NodeOut NodeMaintenanceState = "Out"
	// NodeHeld: the node keeps announcing, being the last that could.
	NodeHeld NodeMaintenanceState = "Held"
)

// NodeMaintenance is a node in maintenance.
type NodeMaintenance struct {
	// Node names the node.
	Node string `json:"node"`
	// State is Out or Held.
	State NodeMaintenanceState `json:"state"`
	// Reason says why the node is being taken down, and, when Held, for
	// which advertisement it keeps announcing.
	Reason string `json:"reason"`
}

// MetalLB tunes the MetalLB the operator runs: one per cluster, named metallb,
// in MetalLB's namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=".status.conditions[?(@.type=='Available')].status"
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=".status.conditions[?(@.type=='Progressing')].status"
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=".status.conditions[?(@.type=='Degraded')].status"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".status.version"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type MetalLB struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MetalLBSpec   `json:"spec,omitempty"`
	Status MetalLBStatus `json:"status,omitempty"`
}

// MetalLBList is a list of MetalLB.
// +kubebuilder:object:root=true
type MetalLBList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MetalLB `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MetalLB{}, &MetalLBList{})
}
