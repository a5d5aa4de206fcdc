package maintenance

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
)

// nodesInMaintenance is, on the operator's metrics endpoint, each node in
// maintenance and where it stands; why is in the MetalLB object's status.
var nodesInMaintenance = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "cluster_network_operator_metallb_node_maintenance",
	Help: "1 for each node being taken down for maintenance: state Out when MetalLB's announcements left it, Held when it keeps them, the last node that could announce.",
}, []string{"node", "state"})

func init() {
	metrics.Registry.MustRegister(nodesInMaintenance)
}

// record publishes a report as the metric.
func record(rep decide.Report) {
	nodesInMaintenance.Reset()
	for _, o := range rep.Out {
		nodesInMaintenance.WithLabelValues(o.Node, string(v1beta1.NodeOut)).Set(1)
	}
	for _, h := range rep.Held {
		nodesInMaintenance.WithLabelValues(h.Node, string(v1beta1.NodeHeld)).Set(1)
	}
}
