package decide

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// epoch is when the test Services are created, a second apart by age.
var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func lb(name string, opts ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(epoch)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80}}},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func withClass(c string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.LoadBalancerClass = &c }
}

func createdAt(seconds int) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(seconds) * time.Second))
	}
}

func withPorts(ports ...corev1.ServicePort) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Ports = ports }
}

func withFamilies(f ...corev1.IPFamily) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.IPFamilies = f }
}

var localPolicy = func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func node(name string, ready bool, addresses ...corev1.NodeAddress) *corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Addresses: addresses, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
}

func internal(a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a}
}
func external(a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: a}
}
