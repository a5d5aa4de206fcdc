package plan

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// changed returns those of objs that differ from what the cluster holds.
func changed(s *Snapshot, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if objects.NeedsWrite(o, s.Owned[objects.KeyOf(o)]) {
			out = append(out, o)
		}
	}
	return out
}

// prunable returns the owned objects not in want, but those never deleted,
// kinds in the reverse of apply order, so that what depends on others goes
// first.
func prunable(s *Snapshot, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	wanted := map[objects.Key]bool{}
	for _, o := range want {
		wanted[objects.KeyOf(o)] = true
	}
	var out []*unstructured.Unstructured
	for _, gvk := range slices.Backward(s.Kinds) {
		var ofKind []*unstructured.Unstructured
		for key, o := range s.Owned {
			if key.GroupKind == gvk.GroupKind() && !wanted[key] && !neverDeleted(o) && o.GetDeletionTimestamp() == nil {
				ofKind = append(ofKind, o)
			}
		}
		slices.SortFunc(ofKind, func(a, b *unstructured.Unstructured) int {
			// A default deny goes before the allow-lists it needs.
			if da, db := objects.IsDefaultDeny(a), objects.IsDefaultDeny(b); da != db {
				if da {
					return -1
				}
				return 1
			}
			return strings.Compare(objects.Describe(a), objects.Describe(b))
		})
		out = append(out, ofKind...)
	}
	return out
}

// neverDeleted protects what losing would lose user data or split the
// speakers' memberlist cluster: the CRDs (and with them every MetalLB object),
// the namespace, the memberlist key.
func neverDeleted(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case objects.CustomResourceDefinition.Kind, objects.Namespace.Kind:
		return true
	case objects.Secret.Kind:
		return o.GetName() == manifests.MemberlistSecret
	}
	return false
}

func onlyKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

func withoutKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

func refsOfObjects(objs []*unstructured.Unstructured) []objects.Ref {
	refs := make([]objects.Ref, len(objs))
	for i, o := range objs {
		refs[i] = objects.RefOf(o)
	}
	return refs
}

func refsOf(foreign []objects.Foreign) []objects.Ref {
	refs := make([]objects.Ref, len(foreign))
	for i, f := range foreign {
		refs[i] = f.Ref()
	}
	return refs
}
