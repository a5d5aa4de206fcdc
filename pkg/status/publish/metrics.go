package publish

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Metrics of operands, on the operator's metrics endpoint. Reconcile errors are
// controller-runtime's controller_runtime_reconcile_errors_total.
var (
	rolloutPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cluster_network_operator_rollout_pods",
		Help: "Pods of an operand's workload: desired, updated to the current template, available.",
	}, []string{"operand", "workload", "state"})
	active = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cluster_network_operator_operand_active",
		Help: "1 when the operand is deployed (configured, on an allowed platform), else 0.",
	}, []string{"operand"})
	condition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cluster_network_operator_operand_condition",
		Help: "1 when the operand's condition of this type is True, else 0.",
	}, []string{"operand", "condition"})
)

func init() {
	metrics.Registry.MustRegister(rolloutPods, active, condition)
}

// Record publishes the operand's state as metrics.
func (r Reporter) Record(deployed bool, rollouts []status.Rollout, cs status.Conditions) {
	operand := r.Operand
	active.WithLabelValues(operand).Set(boolValue(deployed))
	rolloutPods.DeletePartialMatch(prometheus.Labels{"operand": operand})
	for _, w := range rollouts {
		rolloutPods.WithLabelValues(operand, w.Name, "desired").Set(float64(w.Desired))
		rolloutPods.WithLabelValues(operand, w.Name, "updated").Set(float64(w.Updated))
		rolloutPods.WithLabelValues(operand, w.Name, "available").Set(float64(w.Available))
	}
	for _, c := range cs {
		condition.WithLabelValues(operand, c.Type).Set(boolValue(c.Status == metav1.ConditionTrue))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
