package objects

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Foreign is an object the applier would write that exists but is not owned:
// something else created it.
type Foreign struct {
	// Object is the rendered object, as the inventory names it: read only.
	Object *unstructured.Unstructured
	// Live is the existing object's metadata.
	Live *metav1.PartialObjectMetadata
}

// Ref names the existing object.
func (f Foreign) Ref() Ref {
	return Ref{GroupVersionKind: f.Object.GroupVersionKind(), Namespace: f.Object.GetNamespace(), Name: f.Object.GetName(), UID: f.Live.UID}
}

// Managers are the field managers that wrote it, such as "helm" or "kubectl".
func (f Foreign) Managers() []string {
	var names []string
	if f.Live == nil {
		return nil
	}
	for _, m := range f.Live.ManagedFields {
		if !slices.Contains(names, m.Manager) {
			names = append(names, m.Manager)
		}
	}
	return names
}
