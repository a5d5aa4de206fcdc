package explain

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// large is a cluster of 2,000 nodes (the last excluded) and 10,000
// LoadBalancer Services, one of them pending on a requested address another
// holds, the worst of explain's scans.
func large() (*Cluster, Target) {
	c := healthy()
	c.Nodes, c.Speakers = nil, nil
	for i := range 2000 {
		name := fmt.Sprintf("node-%d", i)
		c.Nodes = append(c.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}}})
		c.Speakers = append(c.Speakers, corev1.Pod{Spec: corev1.PodSpec{NodeName: name},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}})
	}
	c.Nodes[1999].Labels[corev1.LabelNodeExcludeBalancers] = ""
	for i := range 10000 {
		s := service(withAddress(fmt.Sprintf("198.51.100.%d", i%250), "default"))
		s.Name = fmt.Sprintf("svc-%d", i)
		c.Services = append(c.Services, *s)
	}
	c.Services[9999].Status.LoadBalancer.Ingress[0].IP = "192.0.2.10"
	return c, Target{Service: service(annotated(AnnotationAddresses, "192.0.2.10"))}
}

func BenchmarkExplainPending(b *testing.B) {
	c, t := large()
	b.ReportAllocs()
	for b.Loop() {
		if e := Service(c, t); e.Reason != "AddressTaken" {
			b.Fatalf("reason %s, want AddressTaken", e.Reason)
		}
	}
}

func BenchmarkExplainUnannounced(b *testing.B) {
	c, _ := large()
	t := Target{Service: service(withAddress("192.0.2.10", "default"), local), Endpoints: endpoints("node-1999")}
	b.ReportAllocs()
	for b.Loop() {
		if e := Service(c, t); e.Reason != "NoEligibleNode" {
			b.Fatalf("reason %s, want NoEligibleNode", e.Reason)
		}
	}
}

func BenchmarkStatus(b *testing.B) {
	c, _ := large()
	b.ReportAllocs()
	for b.Loop() {
		if r := Status(c, nil, nil); len(r.Speakers) != 2000 {
			b.Fatalf("%d speakers, want 2000", len(r.Speakers))
		}
	}
}
