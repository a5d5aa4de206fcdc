package plan

import (
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// monitoringServed and monitoringPending are prometheus-operator's CRDs
// served, and existing with their kinds not served yet.
var (
	monitoringServed  = func(s *Snapshot) { s.MonitoringServed = true }
	monitoringPending = func(s *Snapshot) { s.MonitoringPending = true }
	idleConditions    = []string{"Available True AsExpected: a speaker runs on every node", "Progressing False AsExpected"}
)

// monitoringCases are the decisions on the monitoring objects: rendered only
// where their CRDs are served, looked at again soon while they are not yet.
var monitoringCases = []planCase{
	{name: "monitoring CRDs appear: the controller's and the speakers' metrics Services and ServiceMonitors, and the alerts",
		cluster: with(settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))), monitoringServed),
		want:    planned{apply: []string{"Service/controller-monitor-service", "Service/speaker-monitor-service", "ServiceMonitor/controller-monitor", "ServiceMonitor/speaker-monitor", "PrometheusRule/metallb"}, version: "A", conditions: idleConditions}},
	{name: "monitoring CRDs that exist, their kinds not served yet: nothing rendered for them, looked at again within a second",
		cluster: with(settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))), monitoringPending),
		want:    planned{version: "A", requeue: time.Second, conditions: idleConditions}},
	{name: "on OpenShift, the namespace labelled for the platform's Prometheus, which may read the scrape targets",
		opts:    func(o *Options) { o.OpenShift = true },
		cluster: with(settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))), monitoringServed),
		want: planned{apply: []string{"Namespace/metallb-system", "Role/prometheus-k8s", "RoleBinding/prometheus-k8s",
			"ServiceMonitor/controller-monitor", "ServiceMonitor/speaker-monitor", "PrometheusRule/metallb"}, version: "A", conditions: idleConditions}},
	{name: "on OpenShift without the monitoring CRDs: nothing for the platform's Prometheus",
		opts:    func(o *Options) { o.OpenShift = true },
		cluster: settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}))),
		want:    planned{version: "A", conditions: idleConditions}},
	{name: "with frr-k8s, frr-k8s's metrics Service and ServiceMonitor too",
		cluster: with(settled(with(runningWith("A", frrK8sSpec), withSpec(frrK8sSpec))), monitoringServed),
		want: planned{apply: []string{"Service/controller-monitor-service", "Service/speaker-monitor-service", "Service/frr-k8s-metrics-service", "ServiceMonitor/controller-monitor", "ServiceMonitor/speaker-monitor", "ServiceMonitor/frr-k8s-monitor", "PrometheusRule/metallb"},
			version: "A", conditions: idleConditions}},
}
