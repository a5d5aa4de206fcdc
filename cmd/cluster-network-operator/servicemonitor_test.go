package main

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// The operator's ServiceMonitor finds its metrics: it selects the metrics
// Service, by its labels and in its namespace, and scrapes the Service's port
// over HTTPS, which leads to the port the Deployment's container serves
// --metrics-bind-address on; that Service selects the operator's pods.
func TestOperatorServiceMonitorFindsTheMetrics(t *testing.T) {
	monitor, service, deployment := operatorMonitoring(t)
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

// On OpenShift, where the CVO applies the ServiceMonitor, it verifies the
// operator's certificate against the service CA for the Service's name: the
// Service asks the service CA for that certificate, and the operator serves it
// from the Secret its Deployment mounts, optional (no CA writes it elsewhere).
func TestOperatorServiceMonitorVerifiesTheServiceCA(t *testing.T) {
	monitor, service, deployment := operatorMonitoring(t)
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	tls, _, _ := unstructured.NestedMap(endpoints[0].(map[string]any), "tlsConfig")
	want := map[string]any{"caFile": manifests.ServiceCAFile, "serverName": service.Name + "." + service.Namespace + ".svc"}
	if !maps.Equal(tls, want) {
		t.Errorf("the ServiceMonitor's tlsConfig is %v, want %v", tls, want)
	}
	secret := service.Annotations[objects.ServingCertSecretAnnotation]
	pod := deployment.Spec.Template.Spec
	v := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == secret })
	if secret == "" || v < 0 || pod.Volumes[v].Secret.Optional == nil || !*pod.Volumes[v].Secret.Optional {
		t.Fatalf("the Service asks for the certificate Secret %q; the Deployment's volumes %v do not mount it, optional", secret, pod.Volumes)
	}
	c := pod.Containers[0]
	m := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == pod.Volumes[v].Name })
	if m < 0 || !slices.Contains(c.Args, "--metrics-cert-dir="+c.VolumeMounts[m].MountPath) {
		t.Errorf("the operator does not serve the certificate it mounts: mounts %v, args %v", c.VolumeMounts, c.Args)
	}
}

// operatorMonitoring reads the manifests' ServiceMonitor, Service and
// Deployment.
func operatorMonitoring(t *testing.T) (*unstructured.Unstructured, corev1.Service, appsv1.Deployment) {
	t.Helper()
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
	return monitor, service, deployment
}
