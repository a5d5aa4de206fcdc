package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Foundation are the kinds of what is applied whether MetalLB is asked for
// or not: its namespace, and its CRDs, so that users can create its objects.
// Until a plan needs more, a snapshot reads the objects of these kinds only,
// the module's and others' (Snapshot.FoundationOnly): the informers of the
// other kinds would cost memory on every cluster that never asks for MetalLB.
var Foundation = []schema.GroupVersionKind{objects.Namespace, objects.CustomResourceDefinition}

// IsFoundation tells whether a kind is one of the Foundation's.
func IsFoundation(gvk schema.GroupVersionKind) bool { return slices.Contains(Foundation, gvk) }

// foundationKinds are the Foundation's kind names.
func foundationKinds() []string {
	var kinds []string
	for _, gvk := range Foundation {
		kinds = append(kinds, gvk.Kind)
	}
	return kinds
}

// needsEveryKind tells whether a snapshot of the Foundation's kinds only is
// too little to plan on: MetalLB is asked for (configured), another
// installation's objects are in the way, or MetalLB's memberlist Secret
// tells that MetalLB was deployed here (the Secret outlives a deactivation),
// and what it left may be to prune, or to adopt.
func needsEveryKind(s *Snapshot, configured bool) bool {
	return s.FoundationOnly && (configured || len(s.Foreign) > 0 || s.MemberlistFound)
}
