package metallb

import (
	"context"
	"fmt"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
)

// readReports reads what MetalLB's speakers and frr-k8s report failing in
// their announcing: frr-k8s's BGP sessions, once their kind is watched, and
// the Services a speaker could not announce (its announceFailed Events),
// the last few, each checked at the API server: the module caches neither
// the Services nor MetalLB's ServiceL2Statuses, thousands on a large
// cluster.
func (r *Reconciler) readReports(ctx context.Context, s *plan.Snapshot) error {
	if s.FoundationOnly {
		return nil // no speaker runs: nothing to report, and the Events' informers have not started
	}
	if r.watching[manifests.BGPSessionStateKind] {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(manifests.BGPSessionStateKind.GroupVersion().WithKind(manifests.BGPSessionStateKind.Kind + "List"))
		if err := r.client.List(ctx, list); err != nil {
			return fmt.Errorf("listing BGPSessionStates: %w", err)
		}
		s.Reports.Sessions = plan.SessionsOf(list.Items)
	}
	var events corev1.EventList
	if err := r.client.List(ctx, &events); err != nil {
		return err
	}
	failures := plan.AnnounceFailuresOf(events.Items)
	failures = failures[max(0, len(failures)-plan.AnnounceFailuresChecked):]
	for i := range failures {
		if err := r.checkAnnounced(ctx, &failures[i]); err != nil {
			return err
		}
	}
	s.Reports.AnnounceFailures = failures
	return nil
}

// checkAnnounced reads whether the Service a speaker could not announce is
// gone, or announced now.
func (r *Reconciler) checkAnnounced(ctx context.Context, f *plan.AnnounceFailure) error {
	// Listed by name: the operator lists Services (the node-address mode),
	// and needs no other right for this.
	services := &metav1.PartialObjectMetadataList{}
	services.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
	err := r.apiReader.List(ctx, services, client.InNamespace(f.Service.Namespace), client.MatchingFields{"metadata.name": f.Service.Name})
	if err != nil {
		return fmt.Errorf("reading Service %s: %w", f.Service, err)
	}
	f.Gone = len(services.Items) == 0 || (f.ServiceUID != "" && services.Items[0].UID != f.ServiceUID)
	if f.Gone {
		return nil
	}
	var announced metallbv1beta1.ServiceL2StatusList
	err = r.apiReader.List(ctx, &announced, client.InNamespace(r.opts.Namespace), client.Limit(1), client.MatchingLabels{
		manifests.AnnouncedServiceNamespaceLabel: f.Service.Namespace, manifests.AnnouncedServiceNameLabel: f.Service.Name})
	if err := ignoreNoMatch(err); err != nil {
		return fmt.Errorf("listing the ServiceL2Statuses of %s: %w", f.Service, err)
	}
	f.Announced = len(announced.Items) > 0
	return nil
}
