// Package nodecache is what the manager's cache keeps of each Node, for the
// MetalLB module (the provider ID, which tells the platform, and what its
// preflight checks read) and for node maintenance (a few fixed fields): a corev1.Node, even near empty, takes
// three times the memory, and a cluster has thousands.
package nodecache

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
)

// Node is a Node as the cache keeps it: its name, its version (without which
// the informer takes an update for a resync and drops it), its provider ID,
// what the preflight checks read (without the name, which is the Node's), and
// what maintenance watches. Only the informer's store and the watch's
// events hold it: a read of Nodes through the manager's client gets an error
// that names the type.
type Node struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	ProviderID  string
	Preflight   plan.NodeFacts
	Maintenance decide.Watched
}

func (n *Node) DeepCopyObject() runtime.Object {
	c := *n
	n.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Maintenance.Taints = append([]string(nil), n.Maintenance.Taints...)
	c.Preflight.Addresses = append([]netip.Addr(nil), n.Preflight.Addresses...)
	c.Preflight.PodCIDRs = append([]netip.Prefix(nil), n.Preflight.PodCIDRs...)
	return &c
}

// Keep is the transform of the Nodes' informer.
func Keep(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	facts := plan.NodeFactsOf(n)
	facts.Name = ""
	return &Node{ProviderID: n.Spec.ProviderID, Preflight: facts, Maintenance: decide.Watch(n),
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion}}, nil
}

// All are the Nodes as the cache keeps them, read from its informer's store
// as they are: a List would copy every Node, thousands of them, at every
// reconcile. They are not to be changed.
func All(ctx context.Context, c cache.Cache) ([]*Node, error) {
	informer, err := c.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return nil, err
	}
	withStore, ok := informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("the Node informer, a %T, has no store", informer)
	}
	var nodes []*Node
	for _, o := range withStore.GetStore().List() {
		if n, ok := o.(*Node); ok {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}
