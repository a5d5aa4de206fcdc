package binarybench

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// ownedSelector selects what the operator owns: every object it renders
// carries the label.
const ownedSelector = manifests.ManagedByLabel + "=" + manifests.ManagedBy

// CreatePool creates an IPAddressPool, as a user configuring MetalLB does.
func (b *Bench) CreatePool(ctx context.Context, namespace, name string) error {
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1",
		"kind":       "IPAddressPool",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       map[string]any{"addresses": []any{"192.0.2.100-192.0.2.110"}},
	}}
	_, err := b.Dynamic.Resource(IPAddressPools).Namespace(namespace).Create(ctx, pool, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating IPAddressPool %s/%s: %v", namespace, name, err)
	}
	return nil
}

// DeletePool deletes an IPAddressPool.
func (b *Bench) DeletePool(ctx context.Context, namespace, name string) error {
	err := b.Dynamic.Resource(IPAddressPools).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil {
		return fmt.Errorf("deleting IPAddressPool %s/%s: %v", namespace, name, err)
	}
	return nil
}

// Workloads follows MetalLB's controller Deployment and speaker DaemonSet.
type Workloads struct {
	controller, speaker *Watch
}

// WatchWorkloads starts following the workloads: changes made after it
// returns are seen.
func (b *Bench) WatchWorkloads(ctx context.Context) (*Workloads, error) {
	controller, err := NewWatch(ctx, b.Dynamic.Resource(Deployments).Namespace(MetalLBNamespace), ByName("controller"))
	if err != nil {
		return nil, err
	}
	speaker, err := NewWatch(ctx, b.Dynamic.Resource(DaemonSets).Namespace(MetalLBNamespace), ByName("speaker"))
	if err != nil {
		controller.Stop()
		return nil, err
	}
	return &Workloads{controller: controller, speaker: speaker}, nil
}

// Until waits until both workloads exist (exist true) or both are gone.
func (w *Workloads) Until(ctx context.Context, exist bool) error {
	for _, c := range []struct {
		w    *Watch
		name string
	}{{w.controller, "controller"}, {w.speaker, "speaker"}} {
		cond := Exists(c.name)
		if !exist {
			cond = None
		}
		if err := c.w.Until(ctx, cond); err != nil {
			return fmt.Errorf("waiting for the %s to be there=%v: %v", c.name, exist, err)
		}
	}
	return nil
}

// Stop ends the watches.
func (w *Workloads) Stop() {
	w.controller.Stop()
	w.speaker.Stop()
}

// WaitPruned waits until the operator has pruned MetalLB's ServiceAccounts:
// they come first in the templates, so the operator deletes them last, and
// once they are gone the deactivation is complete.
func (b *Bench) WaitPruned(ctx context.Context) error {
	opts := metav1.ListOptions{LabelSelector: ownedSelector}
	w, err := NewWatch(ctx, b.Dynamic.Resource(ServiceAccounts).Namespace(MetalLBNamespace), opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	if err := w.Until(ctx, None); err != nil {
		return fmt.Errorf("waiting for MetalLB's ServiceAccounts to be pruned: %v", err)
	}
	return nil
}
