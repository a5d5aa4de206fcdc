package metallb

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// readForeign looks up, in the lookup cache, the objects the module renders
// that the owned ones lack: those that exist were created by someone else.
// The namespace is shared, and never foreign; it is read for the adoption
// annotation, from the cache whose events the reconcile follows for it: the
// owned one if it is owned, else the lookup cache (the other may lag).
func (r *Reconciler) readForeign(ctx context.Context, s *plan.Snapshot) error {
	var missing []*unstructured.Unstructured
	read := s.Kinds
	for _, o := range r.inventory.Objects {
		if o.GroupVersionKind() != objects.Namespace && slices.Contains(read, o.GroupVersionKind()) && s.Owned[objects.KeyOf(o)] == nil {
			missing = append(missing, o)
		}
	}
	var err error
	s.Foreign, err = apply.FindForeign(ctx, r.lookup, missing, manifests.Ownership)
	if err != nil {
		return err
	}
	if owned := s.OwnedObject(objects.Namespace, "", r.opts.Namespace); owned != nil {
		s.AdoptionAllowed = owned.GetAnnotations()[manifests.AdoptAnnotation] == "true"
		return nil
	}
	ns := objects.Metadata(objects.Namespace)
	err = r.lookup.Get(ctx, types.NamespacedName{Name: r.opts.Namespace}, ns)
	s.AdoptionAllowed = err == nil && ns.Annotations[manifests.AdoptAnnotation] == "true"
	return client.IgnoreNotFound(err)
}

// readWorkloads lists MetalLB's workloads, whoever installed them, from the
// lookup cache: it holds every DaemonSet, and the Deployments of MetalLB's
// namespace. Their component label must match their kind (metallbWorkloads
// names both).
func (r *Reconciler) readWorkloads(ctx context.Context, s *plan.Snapshot) error {
	if s.FoundationOnly {
		return nil
	}
	for _, w := range metallbWorkloads {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(w.kind.GroupVersion().WithKind(w.kind.Kind + "List"))
		if err := r.lookup.List(ctx, list); err != nil {
			return fmt.Errorf("listing %s: %w", w.kind.Kind, err)
		}
		for i := range list.Items {
			if o := &list.Items[i]; manifests.ComponentOf(o.Labels) == w.component {
				o.SetGroupVersionKind(w.kind)
				s.Workloads = append(s.Workloads, o)
			}
		}
	}
	return nil
}

// metallbWorkloads are MetalLB's own, in the order they are told: its
// controller Deployment and its speaker DaemonSet.
var metallbWorkloads = []struct {
	kind      schema.GroupVersionKind
	component string
}{{objects.Deployment, manifests.ControllerName}, {objects.DaemonSet, manifests.SpeakerName}}

// readMemberlistFound reads, once, whether MetalLB's memberlist Secret
// exists, while only the Foundation's kinds are read: the Secrets' informers
// have not started, and it tells that MetalLB was deployed here.
func (r *Reconciler) readMemberlistFound(ctx context.Context, s *plan.Snapshot) error {
	if !s.FoundationOnly {
		return nil
	}
	if r.memberlistFound == nil {
		// Its metadata, listed by name: the operator's grants on Secrets
		// (list) do not include get.
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(objects.Secret.GroupVersion().WithKind("SecretList"))
		err := r.apiReader.List(ctx, list, client.InNamespace(r.opts.Namespace), client.MatchingFields{"metadata.name": manifests.MemberlistSecret})
		if err != nil {
			return err
		}
		r.memberlistFound = new(len(list.Items) > 0)
	}
	s.MemberlistFound = *r.memberlistFound
	return nil
}

// readMemberlistKeys reads which keys the memberlist Secret holds while it is
// another installation's: the lookups keep no data. It is read from the API
// server by a list of that one name, a read the operator is granted in
// MetalLB's namespace (it may get no Secret), and only then.
func (r *Reconciler) readMemberlistKeys(ctx context.Context, s *plan.Snapshot) error {
	if !slices.ContainsFunc(s.Foreign, func(f objects.Foreign) bool {
		return f.Object.GroupVersionKind() == objects.Secret && f.Object.GetName() == manifests.MemberlistSecret
	}) {
		return nil
	}
	var list corev1.SecretList
	err := r.apiReader.List(ctx, &list, client.InNamespace(r.opts.Namespace), client.MatchingFields{"metadata.name": manifests.MemberlistSecret})
	if err != nil || len(list.Items) == 0 {
		return err // one gone since the lookup is no longer foreign: its event brings a reconcile
	}
	s.MemberlistKeys = slices.Sorted(maps.Keys(list.Items[0].Data))
	if s.MemberlistKeys == nil {
		s.MemberlistKeys = []string{}
	}
	return nil
}
