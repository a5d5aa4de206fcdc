package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AppliedHashAnnotation holds, on every object the applier writes, a hash of
// what it wrote: an object whose hash matches and whose fields still hold what
// was written needs no write.
const AppliedHashAnnotation = "networkoperator.openshift.io/applied-hash"

// CreateOnlyAnnotation marks an object that is created when missing and never
// written again: its content, once in the cluster, is not the operator's to
// change (a generated key, or a Secret another component fills in).
const CreateOnlyAnnotation = "networkoperator.openshift.io/create-only"

// CreateOnly tells whether obj is marked create-only.
func CreateOnly(obj metav1.Object) bool {
	return obj.GetAnnotations()[CreateOnlyAnnotation] == "true"
}

// NeedsWrite tells whether desired must be written over live (nil: the object
// does not exist): a create-only object only when it does not exist, any other
// when live does not hold every field of it (see Contains), CRDs' schemas
// compared by their digests (see WithSchemaDigests).
func NeedsWrite(desired, live *unstructured.Unstructured) bool {
	if live == nil {
		return true
	}
	if CreateOnly(desired) {
		return false
	}
	compared := WithSchemaDigests(desired)
	return !Contains(WithSchemaDigests(live).Object, withHash(compared, hashOf(compared)).Object)
}

// Applied returns o as the applier writes it: a copy carrying the hash of its
// content, a CRD's schemas hashed by their digests, so that the hash is
// computed with the digests NeedsWrite computes anyway. The copy is shallow
// but for metadata: only metadata.annotations differs, so neither object may
// be changed afterwards.
func Applied(o *unstructured.Unstructured) *unstructured.Unstructured {
	return withHash(o, hashOf(WithSchemaDigests(o)))
}

func hashOf(o *unstructured.Unstructured) string {
	data, _ := json.Marshal(o.Object) // maps marshal in key order: the hash is stable
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// withHash is a copy of o, shallow but for metadata, annotated with hash.
func withHash(o *unstructured.Unstructured, hash string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: maps.Clone(o.Object)}
	if metadata, ok := o.Object["metadata"].(map[string]any); ok {
		obj.Object["metadata"] = maps.Clone(metadata)
	}
	annotations := obj.GetAnnotations() // a copy
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedHashAnnotation] = hash
	obj.SetAnnotations(annotations)
	return obj
}

// Contains tells whether live holds every field of desired with the same value:
// fields the API server defaulted, or other managers added, do not count; lists
// must match element for element. With the applied hash among desired's
// annotations, a field dropped from desired also shows, as a changed hash.
func Contains(live, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			lv, ok := l[k]
			if !ok || !Contains(lv, dv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !Contains(l[i], d[i]) {
				return false
			}
		}
		return true
	default:
		return live == desired
	}
}
