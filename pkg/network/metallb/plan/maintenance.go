package plan

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	maintenance "github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// maintenanceScope is what node maintenance follows while MetalLB is
// deployed: the MetalLB object's signals, and the advertisements, by the
// nodes they announce from.
func maintenanceScope(s *Snapshot, openshift bool) *maintenance.Scope {
	var setting *v1beta1.Maintenance
	if s.MetalLB != nil {
		setting = s.MetalLB.Spec.Maintenance
	}
	scope := &maintenance.Scope{Signals: maintenance.SignalsFor(openshift, setting)}
	for _, a := range s.Advertisements {
		ad := maintenance.Advertisement{Kind: a.Object.Kind, Name: a.Object.Name, NodeSelectors: selectors(a.NodeSelectors),
			BGP: a.Object.Kind == manifests.BGPAdvertisementKind.Kind}
		if ad.BGP {
			ad.Peers = []maintenance.Selectors{}
			for _, p := range s.Peers {
				if len(a.Peers) == 0 || slices.Contains(a.Peers, p.Object.Name) {
					ad.Peers = append(ad.Peers, selectors(p.NodeSelectors))
				}
			}
		}
		scope.Advertisements = append(scope.Advertisements, ad)
	}
	return scope
}

// selectors are label selectors as maintenance matches them; one that is
// not valid (MetalLB refuses it) selects nothing.
func selectors(in []metav1.LabelSelector) maintenance.Selectors {
	var out maintenance.Selectors
	for i := range in {
		s, err := metav1.LabelSelectorAsSelector(&in[i])
		if err != nil {
			s = labels.Nothing()
		}
		out = append(out, s)
	}
	return out
}

// ConditionMaintenanceHeld is on the MetalLB object while a node being taken
// down keeps announcing, the last that could for an advertisement.
const ConditionMaintenanceHeld = "MaintenanceHeld"

// ReasonLastNode is its reason.
const ReasonLastNode = "LastNode"

// reportMaintenance writes node maintenance's report in the MetalLB object's
// status: its nodes, and the condition while one is held.
func reportMaintenance(s *v1beta1.MetalLBStatus, rep maintenance.Report, generation int64, now time.Time) {
	s.Maintenance = nil
	for _, o := range rep.Out {
		s.Maintenance = append(s.Maintenance, v1beta1.NodeMaintenance{Node: o.Node, State: v1beta1.NodeOut, Reason: o.Why})
	}
	var held []string
	for _, h := range rep.Held {
		if slices.ContainsFunc(s.Maintenance, func(n v1beta1.NodeMaintenance) bool { return n.Node == h.Node }) {
			continue // held for more than one advertisement: the first says it
		}
		s.Maintenance = append(s.Maintenance, v1beta1.NodeMaintenance{Node: h.Node, State: v1beta1.NodeHeld, Reason: h.Message()})
		held = append(held, h.Message())
	}
	slices.SortFunc(s.Maintenance, func(a, b v1beta1.NodeMaintenance) int { return strings.Compare(a.Node, b.Node) })
	if len(held) == 0 {
		meta.RemoveStatusCondition(&s.Conditions, ConditionMaintenanceHeld)
		return
	}
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: ConditionMaintenanceHeld, Status: metav1.ConditionTrue,
		Reason: ReasonLastNode, Message: strings.Join(held, ". "), ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now)})
}
