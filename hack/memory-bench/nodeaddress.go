package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// nodeAddressRatio is issue 17's bound: the operator's RSS with the
// node-address mode serving every Service, over its RSS with the mode off on
// the same cluster.
const nodeAddressRatio = 1.5

// nodeAddressReconciles is the node-address controller's reconcile count.
const nodeAddressReconciles = `controller_runtime_reconcile_total{controller="node-address"}`

var metallbs = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "metallbs"}

// compareNodeAddress measures the settled operator with nothing configured,
// which on more than one node leaves the mode off, then enables it on the
// MetalLB object, times its reconciles until
// settled, checks that every Service got its addresses, and measures again.
// Its goal is the ratio (issue 12's RSS goal is measure's).
func compareNodeAddress(ctx context.Context, b *binarybench.Bench, m *metricsReader, c config) error {
	if err := waitSettled(ctx, m, c.settle); err != nil {
		return err
	}
	off, _, err := readMemory(b.Operator, m, c, "node-address mode off")
	if err != nil {
		return err
	}
	before, err := m.read()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := enableNodeAddress(ctx, b); err != nil {
		return err
	}
	if err := waitSettled(ctx, m, c.settle); err != nil {
		return err
	}
	busy := time.Since(start) - c.settle
	after, err := m.read()
	if err != nil {
		return err
	}
	n := after[nodeAddressReconciles] - before[nodeAddressReconciles]
	fmt.Printf("node-address mode on: %.0f reconciles in %s, %.0f per second\n", n, busy.Round(time.Millisecond), n/busy.Seconds())
	if err := checkAddressed(ctx, b, c.services); err != nil {
		return err
	}
	on, _, err := readMemory(b.Operator, m, c, "node-address mode on")
	if err != nil {
		return err
	}
	ratio := float64(on.RSS) / float64(off.RSS)
	fmt.Printf("RSS with the mode on / off: %.2f (bound %.1f)\n", ratio, nodeAddressRatio)
	if ratio > nodeAddressRatio {
		return binarybench.Miss(nil, "RSS with the node-address mode on is %.2f times that with it off, over %.1f", ratio, nodeAddressRatio)
	}
	return nil
}

// enableNodeAddress creates the MetalLB object with the mode enabled.
func enableNodeAddress(ctx context.Context, b *binarybench.Bench) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1", "kind": "MetalLB",
		"metadata": map[string]any{"name": "metallb", "namespace": binarybench.MetalLBNamespace},
		"spec":     map[string]any{"nodeAddress": map[string]any{"mode": "Enabled"}},
	}}
	_, err := b.Dynamic.Resource(metallbs).Namespace(binarybench.MetalLBNamespace).Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// checkAddressed checks that each of the Services has MaxNodes addresses.
func checkAddressed(ctx context.Context, b *binarybench.Bench, services int) error {
	addressed := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := b.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return err
		}
		for _, s := range list.Items {
			if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == decide.MaxNodes {
				addressed++
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	fmt.Printf("%d of %d Services have %d node addresses\n", addressed, services, decide.MaxNodes)
	if addressed != services {
		return fmt.Errorf("%d of %d Services have their node addresses", addressed, services)
	}
	return nil
}
