package apply

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CreateOnlyAnnotation marks an object that is created when missing and never
// written again: its content, once in the cluster, is not the operator's to
// change (a generated key, or a Secret another component fills in).
const CreateOnlyAnnotation = "networkoperator.openshift.io/create-only"

// CreateOnly tells whether obj is marked create-only.
func CreateOnly(obj metav1.Object) bool {
	return obj.GetAnnotations()[CreateOnlyAnnotation] == "true"
}
