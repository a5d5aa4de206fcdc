package nodeaddress

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// Each transform keeps the same of what it kept already: client-go may
// transform an object twice, and the mode's mark of who wrote a Service's
// ingress, worked out from managed fields the kept copy no longer has, must
// stay.
func TestTransformsKeepWhatTheyKept(t *testing.T) {
	ingress := corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}}}
	statusBy := func(manager string, op metav1.ManagedFieldsOperationType) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: op, Subresource: "status",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:loadBalancer":{}}}`)}}}
	}
	service := func(entries []metav1.ManagedFieldsEntry) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", ManagedFields: entries,
			Annotations: map[string]string{"user": "note"}},
			Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
			Status: corev1.ServiceStatus{LoadBalancer: ingress}}
	}
	for _, tc := range []struct {
		name      string
		transform func(any) (any, error)
		obj       any
		want      func(*corev1.Service) // marks a Service as the kept copy must be
	}{
		{"a Service the mode wrote", keepServiceFields, service(statusBy(FieldManager, metav1.ManagedFieldsOperationApply)),
			func(s *corev1.Service) { decide.MarkWritten(s, ingress.Ingress) }},
		{"a Service another controller addressed", keepServiceFields, service(statusBy("another-lb", metav1.ManagedFieldsOperationApply)),
			func(s *corev1.Service) { decide.MarkWriter(s, "another-lb") }},
		{"a Service nobody addressed", keepServiceFields, service([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}), func(*corev1.Service) {}},
		{"an EndpointSlice", keepEndpointFields, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "a-1",
			Labels: map[string]string{discoveryv1.LabelServiceName: "a", "other": "x"}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, NodeName: new("kwok-0")}}}, nil},
		{"a Node", keepNodeFields, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-0",
			Labels: map[string]string{corev1.LabelNodeExcludeBalancers: "", "other": "x"}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}, {Type: "Other"}}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, err := tc.transform(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			twice, err := tc.transform(once)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(once, twice) {
				t.Errorf("kept again, it changed:\n once %+v\ntwice %+v", once, twice)
			}
			if svc, ok := once.(*corev1.Service); ok {
				want := &corev1.Service{}
				tc.want(want)
				if decide.Mark(svc) != decide.Mark(want) || svc.Annotations != nil {
					t.Errorf("kept with mark %q and annotations %v, want mark %q and no annotations", decide.Mark(svc), svc.Annotations, decide.Mark(want))
				}
			}
		})
	}
}
