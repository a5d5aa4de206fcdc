package explain

import (
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const ns = "metallb-system"

// healthy is a cluster where MetalLB runs on three nodes, with one pool of
// eleven IPv4 addresses announced in layer 2.
func healthy() *Cluster {
	c := &Cluster{Namespace: ns,
		Controller: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "controller"}, Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
		Pools:      []metallbv1beta1.IPAddressPool{pool("default", "192.0.2.10-192.0.2.20")},
		L2Ads:      []metallbv1beta1.L2Advertisement{{ObjectMeta: metav1.ObjectMeta{Name: "l2", Namespace: ns}}},
		Namespaces: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{"team": "a"}}}},
	}
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		c.Nodes = append(c.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"name": n}}})
		c.Speakers = append(c.Speakers, corev1.Pod{Spec: corev1.PodSpec{NodeName: n},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}})
	}
	return c
}

func pool(name string, addresses ...string) metallbv1beta1.IPAddressPool {
	return metallbv1beta1.IPAddressPool{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: metallbv1beta1.IPAddressPoolSpec{Addresses: addresses},
		Status: metallbv1beta1.IPAddressPoolStatus{AvailableIPv4: 11}}
}

// service is demo/web, a LoadBalancer Service on port 80.
func service(changes ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	for _, c := range changes {
		c(s)
	}
	return s
}

func withAddress(a, pool string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: a}}
		s.Annotations[AnnotationAllocatedFrom] = pool
	}
}

func annotated(k, v string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Annotations[k] = v }
}

// endpoints are ready endpoints of the Service on nodes.
func endpoints(nodes ...string) []discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{}
	for _, n := range nodes {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{NodeName: &n})
	}
	return []discoveryv1.EndpointSlice{s}
}

// warning is a Warning Event of MetalLB's controller.
func warning(reason, message string) corev1.Event {
	return corev1.Event{Type: corev1.EventTypeWarning, Reason: reason, Message: message, Source: corev1.EventSource{Component: "metallb-controller"}}
}

func l2Status(node string) metallbv1beta1.ServiceL2Status {
	return metallbv1beta1.ServiceL2Status{Status: metallbv1beta1.MetalLBServiceL2Status{Node: node, ServiceName: "web", ServiceNamespace: "demo",
		Interfaces: []metallbv1beta1.InterfaceInfo{{Name: "eth0"}}}}
}

func peer(name string, selectors ...metav1.LabelSelector) metallbv1beta2.BGPPeer {
	return metallbv1beta2.BGPPeer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: metallbv1beta2.BGPPeerSpec{Address: "198.51.100.1", ASN: 64500, MyASN: 64501, NodeSelectors: selectors}}
}

func selector(k, v string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}
