package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
)

// serviceCIDR is a service range beside testenv's 10.0.0.0/24, whose 254
// addresses would not give every Service its cluster IP.
const serviceCIDR = "10.96.0.0/16"

// addServices creates n Services of type LoadBalancer spread over namespaces,
// concurrency at a time. They take no node ports (2,768 would run out) and
// get cluster IPs from an added ServiceCIDR.
func addServices(ctx context.Context, b *binarybench.Bench, n, namespaces, concurrency int) error {
	start := time.Now()
	cfg := rest.CopyConfig(b.Env.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // concurrency bounds the rate, not the client
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := addServiceCIDR(ctx, b); err != nil {
		return err
	}
	for i := range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceName(i)}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range n {
		g.Go(func() error {
			svc := service(namespaceName(i%namespaces), fmt.Sprintf("svc-%d", i))
			// A port of its own: a node address takes each port once (the
			// node-address mode), and MetalLB does not mind.
			svc.Spec.Ports[0].Port = int32(firstPort + i%(65536-firstPort))
			if _, err := client.CoreV1().Services(svc.Namespace).Create(gctx, svc, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Printf("%d Services of type LoadBalancer in %d namespaces created in %s\n", n, namespaces, time.Since(start).Round(time.Millisecond))
	return nil
}

// firstPort is the first Service's port.
const firstPort = 10000

func namespaceName(i int) string { return fmt.Sprintf("bench-%d", i) }

func service(namespace, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			Selector:                      map[string]string{"app": name},
			Ports:                         []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// addServiceCIDR adds serviceCIDR, and waits until the API server allocates
// from it: kube-controller-manager, which would mark it Ready, does not run
// here, so a probe Service asking for an address of it is retried until
// created, then deleted.
func addServiceCIDR(ctx context.Context, b *binarybench.Bench) error {
	cidr := &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{serviceCIDR}},
	}
	if _, err := b.Client.NetworkingV1().ServiceCIDRs().Create(ctx, cidr, metav1.CreateOptions{}); err != nil {
		return err
	}
	probe := service(metav1.NamespaceDefault, "service-cidr-probe")
	probe.Spec.ClusterIP = netip.MustParsePrefix(serviceCIDR).Addr().Next().String()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = b.Client.CoreV1().Services(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not allocate from ServiceCIDR %s: %v", serviceCIDR, last)
	}
	return b.Client.CoreV1().Services(probe.Namespace).Delete(ctx, probe.Name, metav1.DeleteOptions{})
}
