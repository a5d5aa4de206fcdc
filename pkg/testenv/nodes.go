package testenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// kwokNodeAnnotation marks the Nodes kwok manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// Node is a fake Node that kwok keeps Ready.
type Node struct {
	Name       string
	InternalIP string
	ProviderID string // as a cloud controller manager would set it, e.g. "aws:///us-east-1a/i-0abc"
	Labels     map[string]string
	Taints     []corev1.Taint
}

// Nodes returns n plain Nodes, kwok-0 … kwok-(n-1), with InternalIPs from
// 192.0.2.10 on (TEST-NET-1).
func Nodes(n int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("kwok-%d", i), InternalIP: fmt.Sprintf("192.0.2.%d", 10+i)}
	}
	return nodes
}

// AddNodes creates the Nodes and waits until kwok reports them Ready.
func (e *Env) AddNodes(ctx context.Context, nodes ...Node) error {
	client, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n.object(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %v", n.Name, err)
		}
	}
	for _, n := range nodes {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
			node, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, err
			}
			return err == nil && status.NodeReady(node), nil
		})
		if err != nil {
			return fmt.Errorf("node %s did not become Ready: %v", n.Name, err)
		}
	}
	return nil
}

func (n Node) object() *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": n.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	// The addresses are set at creation, as a kubelet registering itself does;
	// kwok keeps addresses it finds.
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.Name,
			Labels:      labels,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
		},
		Spec: corev1.NodeSpec{Taints: n.Taints, ProviderID: n.ProviderID},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.InternalIP},
			{Type: corev1.NodeHostName, Address: n.Name},
		}},
	}
}
