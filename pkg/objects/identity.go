package objects

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is a Kubernetes object that knows its kind, typed or not: what an
// Event regards, and what a message names.
type Object interface {
	metav1.Object
	runtime.Object
}

// Key identifies an object across API versions of its kind.
type Key struct {
	schema.GroupKind
	Namespace, Name string
}

// KeyOf returns o's Key.
func KeyOf(o Object) Key {
	return Key{GroupKind: o.GetObjectKind().GroupVersionKind().GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// Ref names one object as it was read, by its UID: a write or a delete
// given a Ref fails on an object replaced since. It is a value, so that
// what holds one holds nothing of a cache.
type Ref struct {
	schema.GroupVersionKind
	Namespace, Name string
	UID             types.UID
}

// RefOf returns o's Ref.
func RefOf(o Object) Ref {
	return Ref{GroupVersionKind: o.GetObjectKind().GroupVersionKind(), Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID()}
}

// Object returns an object that holds nothing but the Ref's kind and name,
// for a client's write or delete.
func (r Ref) Object() *unstructured.Unstructured {
	o := Empty(r.GroupVersionKind)
	o.SetNamespace(r.Namespace)
	o.SetName(r.Name)
	return o
}

func (r Ref) String() string { return describe(r.Kind, r.Namespace, r.Name) }

// Describe names an object for messages: "DaemonSet metallb-system/speaker".
func Describe(o Object) string {
	return describe(o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName())
}

func describe(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// Empty returns an object of a kind that holds nothing else.
func Empty(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	return o
}

// Metadata returns the metadata of an object of a kind, empty.
func Metadata(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(gvk)
	return o
}
