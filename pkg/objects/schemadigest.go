package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// schemaDigestField stands, in a CRD version's schema as the operator keeps
// and compares it, for the OpenAPI schema it digests.
const schemaDigestField = "openAPIV3SchemaSHA256"

// WithSchemaDigests returns o, if it is a CRD, with each version's
// openAPIV3Schema replaced by the SHA-256 of its JSON, and o itself
// otherwise or if it has no schema left to digest. A cache of the CRDs holds
// them so (MetalLB's and frr-k8s's schemas are some 500 KB of maps, which it
// would keep for the life of the operator), and the drift check compares
// desired and live so: any change to a schema changes its digest. The copy
// shares all but the maps on the way to the schemas, so neither object may be
// changed afterwards.
func WithSchemaDigests(o *unstructured.Unstructured) *unstructured.Unstructured {
	if o.GroupVersionKind().GroupKind() != CustomResourceDefinition.GroupKind() {
		return o
	}
	spec, _ := o.Object["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	digested := make([]any, len(versions))
	changed := false
	for i, v := range versions {
		digested[i] = v
		version, _ := v.(map[string]any)
		schema, _ := version["schema"].(map[string]any)
		openAPI, ok := schema["openAPIV3Schema"]
		if !ok {
			continue
		}
		data, _ := json.Marshal(openAPI) // maps marshal in key order: the digest is stable
		sum := sha256.Sum256(data)
		version = maps.Clone(version)
		version["schema"] = map[string]any{schemaDigestField: hex.EncodeToString(sum[:])}
		digested[i], changed = version, true
	}
	if !changed {
		return o
	}
	spec = maps.Clone(spec)
	spec["versions"] = digested
	out := &unstructured.Unstructured{Object: maps.Clone(o.Object)}
	out.Object["spec"] = spec
	return out
}
