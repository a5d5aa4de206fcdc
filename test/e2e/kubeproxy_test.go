package e2e

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Real traffic through a node's address: kube-proxy, built from the pinned
// Kubernetes, runs in iptables mode in each node's network namespace, and a
// backend pod serves HTTP in a namespace of its own behind its node. Once a
// LoadBalancer Service's status lists a node's address, as the node-address
// mode writes it, the client gets the backend's answer at that address and
// the Service's port; another node's address, not listed, is not answered.
func TestKubeProxyCarriesNodeAddressTraffic(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t)
	if err := c.Net.RoutePodsThroughNodes(); err != nil {
		t.Fatal(err)
	}
	c.startKubeProxy(t)
	c.runBackend(t, "backend-0", c.Nodes[1].Name)
	c.createService(t, "web", "example.com/nobody")
	listed, other := c.Nodes[0].InternalIP, c.Nodes[2].InternalIP
	c.setIngress(t, "web", listed)

	c.assertAnswer(t, net.JoinHostPort(listed, "80"), "backend-0", time.Minute)
	if body, err := c.Net.Client.Get(net.JoinHostPort(other, "80"), time.Second); err == nil {
		t.Errorf("%s, not in the Service's status, answered %q", other, body)
	}
}

// startKubeProxy runs kube-proxy on every node, as a DaemonSet with
// kube-proxy's own bootstrap permissions (system:node-proxier), in iptables
// mode and clear of the machine-wide conntrack settings.
func (c *metallbCluster) startKubeProxy(t *testing.T) {
	t.Helper()
	kubectl(t, c.Env, "apply", "-f", "testdata/kube-proxy.yaml")
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=kube-proxy"})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range pods.Items {
			if status.PodReady(&p) {
				ready++
			}
		}
		return ready == len(c.Nodes), nil
	})
	if err != nil {
		t.Fatalf("kube-proxy did not become ready on every node: %v\n%s", err, c.Runner.LogTails(30))
	}
}

// runBackend runs a backend pod on a node and waits until it is ready.
func (c *metallbCluster) runBackend(t *testing.T, name, node string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "backend"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "backend", Image: backendImage,
			Env:            []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
		}}},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && status.PodReady(p), nil
	})
	if err != nil {
		t.Fatalf("backend %s did not become ready on %s", name, node)
	}
}

// createService creates a LoadBalancer Service of the class ("" for none) in
// front of the backends, port 80 to their 8080, changed by options.
func (c *metallbCluster) createService(t *testing.T, name, class string, options ...func(*corev1.Service)) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "backend"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if class != "" {
		svc.Spec.LoadBalancerClass = &class
	}
	for _, o := range options {
		o(svc)
	}
	if _, err := c.Client.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setIngress writes addresses into a Service's status, as a load balancer
// controller does.
func (c *metallbCluster) setIngress(t *testing.T, name string, ips ...string) {
	t.Helper()
	status := corev1ac.ServiceStatus().WithLoadBalancer(corev1ac.LoadBalancerStatus())
	for _, ip := range ips {
		status.LoadBalancer.WithIngress(corev1ac.LoadBalancerIngress().WithIP(ip).WithIPMode(corev1.LoadBalancerIPModeVIP))
	}
	apply := corev1ac.Service(name, "default").WithStatus(status)
	if _, err := c.Client.CoreV1().Services("default").ApplyStatus(t.Context(), apply, metav1.ApplyOptions{FieldManager: "e2e", Force: true}); err != nil {
		t.Fatal(fmt.Errorf("writing %s's ingress: %w", name, err))
	}
}
