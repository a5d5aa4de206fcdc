package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

// waitMetallb waits until the controller and every speaker of the tag are ready.
func (d *demo) waitMetallb(ctx context.Context, tag string) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		ready, _, err := d.readyPods(ctx, tag)
		return err == nil && ready["controller"] == 1 && ready["speaker"] == len(d.Nodes), nil
	})
	if err != nil {
		return errors.New("MetalLB did not become ready within 3 minutes")
	}
	return d.showPods(ctx)
}

// readyPods counts the ready MetalLB pods of the tag by component, and all pods.
func (d *demo) readyPods(ctx context.Context, tag string) (map[string]int, int, error) {
	pods, err := d.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
	if err != nil {
		return nil, 0, err
	}
	ready := map[string]int{}
	for _, p := range pods.Items {
		if status.PodReady(&p) && p.DeletionTimestamp == nil && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+tag) {
			ready[p.Labels["component"]]++
		}
	}
	return ready, len(pods.Items), nil
}

func (d *demo) showPods(ctx context.Context) error {
	pods, err := d.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=metallb"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Printf("    pod %-28s on %-7s %-38s ready=%v\n", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, status.PodReady(&p))
	}
	return nil
}

// expose creates a LoadBalancer Service with a ready endpoint and waits for
// its address.
func (d *demo) expose(ctx context.Context) (net.IP, error) {
	step("a LoadBalancer Service default/web, with one ready endpoint (a pod kwok runs on " + d.Nodes[0].Name + ")")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: d.Nodes[0].Name, Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1"}}},
	}
	if _, err := d.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := d.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var ip net.IP
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := d.Client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(s.Status.LoadBalancer.Ingress) == 0 {
			return false, nil
		}
		ip = net.ParseIP(s.Status.LoadBalancer.Ingress[0].IP)
		return true, nil
	})
	if err != nil {
		return nil, errors.New("the Service got no address within a minute")
	}
	fmt.Printf("    status.loadBalancer.ingress: %s (handed out by MetalLB's controller)\n", ip)
	return ip, nil
}

// showAnswers asks who has the address, from the client, until answered.
func (d *demo) showAnswers(ctx context.Context, ip net.IP) error {
	step(fmt.Sprintf("the client %s asks by ARP who has %s", noderunner.ClientAddress, ip))
	answered := 0
	for deadline := time.Now().Add(30 * time.Second); answered < 3 && time.Now().Before(deadline) && ctx.Err() == nil; {
		mac, err := d.Neighbors.Probe(ip, 500*time.Millisecond)
		if err != nil {
			return err
		}
		if mac != nil {
			fmt.Printf("    reply: %s is at %s (%s's speaker)\n", ip, mac, d.nodeOf(mac))
			answered++
			time.Sleep(300 * time.Millisecond)
		}
	}
	if answered == 0 {
		return fmt.Errorf("nobody answered for %s", ip)
	}
	return nil
}

func (d *demo) nodeOf(mac net.HardwareAddr) string {
	if node, ok := d.NodeOf(mac); ok {
		return node
	}
	return "unknown"
}

// followUpgrade shows the rollout on one live line while the client asks for
// the address every 100 ms.
func (d *demo) followUpgrade(ctx context.Context, ip net.IP, tag string) error {
	var probes, answers int
	var gap, longest time.Duration
	lastAnswer := time.Now()
	deadline := time.Now().Add(5 * time.Minute)
	d.live.Store(true)
	defer d.live.Store(false)
	shown := ""
	for next := time.Now(); ctx.Err() == nil; next = next.Add(100 * time.Millisecond) {
		time.Sleep(time.Until(next))
		mac, err := d.Neighbors.Probe(ip, 90*time.Millisecond)
		if err != nil {
			return err
		}
		probes++
		if mac != nil {
			answers++
			gap, lastAnswer = time.Since(lastAnswer), time.Now()
			longest = max(longest, gap)
		}
		if probes%5 != 0 {
			continue
		}
		ready, total, err := d.readyPods(ctx, tag)
		if err != nil {
			continue
		}
		state := fmt.Sprintf("controller %d/1, speakers %d/%d on %s", ready["controller"], ready["speaker"], len(d.Nodes), tag)
		if state != shown || probes%50 == 0 {
			fmt.Printf("\r    %s; ARP answered %d of %d probes, longest gap %s   ", state, answers, probes, longest.Round(10*time.Millisecond))
			shown = state
		}
		if ready["controller"] == 1 && ready["speaker"] == len(d.Nodes) && total == len(d.Nodes)+1 {
			fmt.Println()
			step(fmt.Sprintf("upgraded: every MetalLB pod runs %s; %s was answered throughout (longest gap %s)", tag, ip, longest.Round(10*time.Millisecond)))
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Println()
			return errors.New("the upgrade did not finish within 5 minutes")
		}
	}
	fmt.Println()
	return ctx.Err()
}
