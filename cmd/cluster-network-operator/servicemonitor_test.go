package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// The operator's ServiceMonitor finds its metrics: it selects the metrics
// Service, by its labels and in its namespace, and scrapes the Service's port
// over HTTPS, which leads to the port the Deployment's container serves
// --metrics-bind-address on; that Service selects the operator's pods.
func TestOperatorServiceMonitorFindsTheMetrics(t *testing.T) {
	var monitor *unstructured.Unstructured
	var service corev1.Service
	var deployment appsv1.Deployment
	for _, o := range readManifests(t) {
		switch o.GetKind() {
		case "ServiceMonitor":
			monitor = o
		case "Service":
			fromUnstructured(t, o, &service)
		case "Deployment":
			fromUnstructured(t, o, &deployment)
		}
	}
	if monitor == nil || service.Name == "" {
		t.Fatal("the manifests have no ServiceMonitor, or no Service")
	}
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	namespaces, _, _ := unstructured.NestedStringSlice(monitor.Object, "spec", "namespaceSelector", "matchNames")
	if !labels.SelectorFromSet(selector).Matches(labels.Set(service.Labels)) || len(namespaces) != 1 || namespaces[0] != service.Namespace {
		t.Errorf("the ServiceMonitor selects %v in %v, not the Service %s/%s (%v)", selector, namespaces, service.Namespace, service.Name, service.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(endpoints))
	}
	endpoint := endpoints[0].(map[string]any)
	if endpoint["scheme"] != "https" || len(service.Spec.Ports) != 1 || endpoint["port"] != service.Spec.Ports[0].Name {
		t.Errorf("the ServiceMonitor scrapes %v://:%v; the Service has %v", endpoint["scheme"], endpoint["port"], service.Spec.Ports)
	}
	pod := deployment.Spec.Template
	if !labels.SelectorFromSet(service.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service selects %v, not the operator's pods (%v)", service.Spec.Selector, pod.Labels)
	}
	target := service.Spec.Ports[0].TargetPort.String()
	for _, p := range pod.Spec.Containers[0].Ports {
		if p.Name == target && p.ContainerPort == service.Spec.Ports[0].Port {
			return
		}
	}
	t.Errorf("the Service's target port %q is not the container's metrics port (%v)", target, pod.Spec.Containers[0].Ports)
}
