package status

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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

// Record publishes an operand's state as metrics.
func Record(operand string, deployed bool, rollouts []Rollout, cs Conditions) {
	active.WithLabelValues(operand).Set(boolValue(deployed))
	rolloutPods.DeletePartialMatch(prometheus.Labels{"operand": operand})
	for _, r := range rollouts {
		rolloutPods.WithLabelValues(operand, r.Name, "desired").Set(float64(r.Desired))
		rolloutPods.WithLabelValues(operand, r.Name, "updated").Set(float64(r.Updated))
		rolloutPods.WithLabelValues(operand, r.Name, "available").Set(float64(r.Available))
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
