package maintenance

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
)

// Reasons of maintenance's Events on nodes.
const (
	ReasonLeft     = "AnnouncementsLeft"
	ReasonReturned = "AnnouncementsReturned"
	ReasonHeld     = "MaintenanceHeld"
)

// Report is the last report.
func (r *Reconciler) Report() decide.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report
}

// setReport keeps a report, and tells the module when it changed.
func (r *Reconciler) setReport(rep decide.Report) {
	r.mu.Lock()
	changed := !equality.Semantic.DeepEqual(r.report, rep)
	r.report = rep
	r.mu.Unlock()
	if changed {
		record(rep)
	}
	if changed && r.reported != nil {
		r.reported()
	}
}
