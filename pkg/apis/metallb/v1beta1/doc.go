// Package v1beta1 is the MetalLB object's API, metallb.io/v1beta1, in the shape of
// the upstream metallb-operator's.
// +kubebuilder:object:generate=true
// +groupName=metallb.io
package v1beta1
