package v1beta1

import corev1 "k8s.io/api/core/v1"

// The rules of this file are the API server's own for these fields of a Pod,
// said by the schema so that the MetalLB object is refused when it is written,
// not MetalLB's workloads when the operator writes them. They are their only
// definition: the operator evaluates this same schema offline (`render -f`,
// and objects written before the CRD had a rule).

// NodeSelector is a node selector of a component's pods.
// +kubebuilder:validation:MaxProperties=64
// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="keys must be label keys: an optional DNS subdomain and /, then at most 63 letters, digits, -, _ or . that begin and end with a letter or digit"
type NodeSelector map[string]LabelValue

// LabelValue is the value of a label: at most 63 letters, digits, '-', '_' or
// '.', beginning and ending with a letter or digit, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string

// Labels returns the selector as plain labels.
func (s NodeSelector) Labels() map[string]string {
	if s == nil {
		return nil
	}
	labels := make(map[string]string, len(s))
	for k, v := range s {
		labels[k] = string(v)
	}
	return labels
}

// Tolerations are tolerations of a component's pods.
// +kubebuilder:validation:MaxItems=32
type Tolerations []Toleration

// Toleration is a corev1.Toleration, with the rules corev1's schema leaves to
// the API server's Go code.
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="must be Exists when key is empty, to tolerate every taint",fieldPath=".operator"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || size(self.value) == 0 || !has(self.operator) || self.operator != 'Exists'",message="must be empty when operator is Exists",fieldPath=".value"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="may only be set when effect is NoExecute",fieldPath=".tolerationSeconds"
type Toleration struct {
	// Key is the taint key the toleration applies to; empty, with operator
	// Exists, it matches every taint.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || !format.qualifiedName().validate(self).hasValue()",message="must be a label key: an optional DNS subdomain and /, then at most 63 letters, digits, -, _ or . that begin and end with a letter or digit"
	Key string `json:"key,omitempty"`
	// Operator is Equal (the default: the taint's value must be Value) or
	// Exists (any value).
	// +optional
	// +kubebuilder:validation:Enum="";Equal;Exists
	Operator corev1.TolerationOperator `json:"operator,omitempty"`
	// Value the taint must have, with operator Equal.
	// +optional
	Value LabelValue `json:"value,omitempty"`
	// Effect of the taints to tolerate; empty tolerates every effect.
	// +optional
	// +kubebuilder:validation:Enum="";NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`
	// TolerationSeconds is how long a NoExecute taint is tolerated.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Core returns the tolerations as a pod spec takes them.
func (ts Tolerations) Core() []corev1.Toleration {
	if ts == nil {
		return nil
	}
	core := make([]corev1.Toleration, len(ts))
	for i, t := range ts {
		core[i] = corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: string(t.Value), Effect: t.Effect, TolerationSeconds: t.TolerationSeconds}
	}
	return core
}

// Annotations are annotations added to a component's pods.
// +kubebuilder:validation:MaxProperties=64
// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",message="keys must be annotation keys: an optional DNS subdomain and /, then at most 63 letters, digits, -, _ or . that begin and end with a letter or digit"
// +kubebuilder:validation:XValidation:rule="self.map(k, size(k) + size(self[k])).sum() <= 262144",message="must be 256 KiB or less in total"
type Annotations map[string]string

// ClassName names a PriorityClass or a RuntimeClass: a DNS subdomain.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
type ClassName string
