package operator

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/library-go/pkg/config/leaderelection"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controlPlaneLabels mark a control-plane node, the old name and the new.
var controlPlaneLabels = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

// LeaseTimings are the leader Lease's timings.
type LeaseTimings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// leaseTimings are OpenShift's (library-go's): a leader keeps its Lease
// through an API server outage of up to RenewDeadline (107 s; 240 s with one
// control-plane node, whose API server is down during its upgrades), at the
// cost of a standby taking over a dead leader's Lease after up to
// LeaseDuration+RetryPeriod. Flags set override them one by one.
func leaseTimings(o Options, singleNode bool) (LeaseTimings, error) {
	le := configv1.LeaderElection{}
	if singleNode {
		le = leaderelection.LeaderElectionSNOConfig(le)
	}
	le = leaderelection.LeaderElectionDefaulting(le, o.OperatorNamespace, LeaseName)
	t := LeaseTimings{LeaseDuration: le.LeaseDuration.Duration, RenewDeadline: le.RenewDeadline.Duration, RetryPeriod: le.RetryPeriod.Duration}
	for flag, d := range map[*time.Duration]time.Duration{&t.LeaseDuration: o.LeaseDuration, &t.RenewDeadline: o.RenewDeadline, &t.RetryPeriod: o.RetryPeriod} {
		if d != 0 {
			*flag = d
		}
	}
	// client-go's own rules, named by the flags.
	if t.LeaseDuration <= t.RenewDeadline {
		return t, fmt.Errorf("--leader-election-lease-duration %s must be longer than --leader-election-renew-deadline %s", t.LeaseDuration, t.RenewDeadline)
	}
	if t.RenewDeadline <= t.RetryPeriod*6/5 {
		return t, fmt.Errorf("--leader-election-renew-deadline %s must be longer than 1.2 times --leader-election-retry-period %s", t.RenewDeadline, t.RetryPeriod)
	}
	return t, nil
}

// singleControlPlane tells whether the cluster has one control-plane node:
// from the Infrastructure object on OpenShift, else from the nodes' labels.
func singleControlPlane(ctx context.Context, c client.Client) (bool, error) {
	var infras configv1.InfrastructureList
	err := c.List(ctx, &infras)
	if err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading the Infrastructure: %w", err)
	}
	for _, i := range infras.Items {
		if i.Name == "cluster" && i.Status.ControlPlaneTopology != "" {
			return i.Status.ControlPlaneTopology == configv1.SingleReplicaTopologyMode, nil
		}
	}
	names := map[string]bool{}
	for _, label := range controlPlaneLabels {
		nodes := &metav1.PartialObjectMetadataList{}
		nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := c.List(ctx, nodes, client.HasLabels{label}); err != nil {
			return false, fmt.Errorf("listing control-plane nodes: %w", err)
		}
		for _, n := range nodes.Items {
			names[n.Name] = true
		}
	}
	return len(names) == 1, nil
}
