package nodeaddress

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// statusApply is the apply configuration of a Service's status with the
// ingress; with none, it holds no field, and applying it removes what the
// mode wrote.
func statusApply(svc *corev1.Service, ingress []corev1.LoadBalancerIngress) *corev1ac.ServiceApplyConfiguration {
	ac := corev1ac.Service(svc.Name, svc.Namespace)
	if len(ingress) == 0 {
		return ac
	}
	lb := corev1ac.LoadBalancerStatus()
	for _, in := range ingress {
		e := corev1ac.LoadBalancerIngress()
		if in.IP != "" {
			e.WithIP(in.IP).WithIPMode(*in.IPMode)
		}
		for _, p := range in.Ports {
			e.WithPorts(corev1ac.PortStatus().WithPort(p.Port).WithProtocol(p.Protocol).WithError(*p.Error))
		}
		lb.WithIngress(e)
	}
	return ac.WithStatus(corev1ac.ServiceStatus().WithLoadBalancer(lb))
}
