package nodeaddress

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// portIndex indexes LoadBalancer Services by each protocol/port they take,
// in an index of the Services' informer itself: the cache's field indexes
// key each value twice (in its namespace, and in all), which at 10,000
// Services cost 3.5 MB for lookups that are always cluster-wide.
const portIndex = "nodeaddress.port"

// modeCache is the mode's own cache: every Service, EndpointSlice and Node of
// the cluster, of each only what the mode reads. It is not the manager's,
// whose Services are the module's own in MetalLB's namespace, and whose Nodes
// are the module's names and provider IDs.
type modeCache struct {
	cache.Cache
	ports toolscache.Indexer // the Services' informer's, with portIndex
}

func newCache(ctx context.Context, cfg *rest.Config, opts cache.Options) (*modeCache, error) {
	opts.ByObject = map[client.Object]cache.ByObject{
		&corev1.Service{}:            {Transform: keepServiceFields, UnsafeDisableDeepCopy: new(true)},
		&discoveryv1.EndpointSlice{}: {Transform: keepEndpointFields, UnsafeDisableDeepCopy: new(true)},
		&corev1.Node{}:               {Transform: keepNodeFields},
	}
	opts.DefaultNamespaces, opts.DefaultTransform = nil, nil
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	informer, err := c.GetInformer(ctx, &corev1.Service{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	indexed, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the informer of Services (%T) has no indexer", informer)
	}
	return &modeCache{Cache: c, ports: indexed.GetIndexer()}, informer.AddIndexers(toolscache.Indexers{portIndex: portsTaken})
}

// portsTaken are the keys of the ports a LoadBalancer Service takes.
func portsTaken(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil, nil
	}
	var keys []string
	for _, p := range decide.PortsOf(svc) {
		keys = append(keys, p.Key())
	}
	return keys, nil
}

// servicesTaking are the Services that take the port: the cache's copies,
// not to be changed.
func (c *modeCache) servicesTaking(port decide.Port) ([]*corev1.Service, error) {
	objs, err := c.ports.ByIndex(portIndex, port.Key())
	out := make([]*corev1.Service, len(objs))
	for i, o := range objs {
		out[i] = o.(*corev1.Service)
	}
	return out, err
}

// keepServiceFields keeps of a Service what the mode decides on, and, in
// place of its status, a mark of who wrote its ingress (decide.MarkWritten,
// decide.MarkWriter): ten thousand statuses of up to 2×MaxNodes entries would
// cost more than all the rest.
func keepServiceFields(obj any) (any, error) {
	s, ok := obj.(*corev1.Service)
	if !ok || s.ManagedFields == nil {
		// A Service the API server sends always has managed fields: one with
		// none was kept already, and client-go may hand it back (an informer
		// that starts as objects are written transforms some twice).
		return obj, nil
	}
	kept := &corev1.Service{
		TypeMeta: s.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion,
			CreationTimestamp: s.CreationTimestamp, DeletionTimestamp: s.DeletionTimestamp},
		Spec: corev1.ServiceSpec{Type: s.Spec.Type, LoadBalancerClass: s.Spec.LoadBalancerClass,
			IPFamilies: s.Spec.IPFamilies, ExternalTrafficPolicy: s.Spec.ExternalTrafficPolicy},
	}
	for _, p := range s.Spec.Ports {
		kept.Spec.Ports = append(kept.Spec.Ports, corev1.ServicePort{Protocol: p.Protocol, Port: p.Port})
	}
	if ownsStatus(s.ManagedFields) {
		decide.MarkWritten(kept, s.Status.LoadBalancer.Ingress)
	} else if w := ingressWriter(s.ManagedFields); w != "" && len(s.Status.LoadBalancer.Ingress) > 0 {
		decide.MarkWriter(kept, w)
	}
	return kept, nil
}

// ownsStatus tells whether FieldManager owns fields of the status. The mode
// writes nothing else there: what it owns is the ingress.
func ownsStatus(entries []metav1.ManagedFieldsEntry) bool {
	for _, e := range entries {
		if e.Manager == FieldManager && e.Subresource == "status" && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// ingressWriter is the field manager that owns status.loadBalancer, the
// mode aside, or "".
func ingressWriter(entries []metav1.ManagedFieldsEntry) string {
	for _, e := range entries {
		if e.Manager != FieldManager && e.Subresource == "status" && e.FieldsV1 != nil &&
			bytes.Contains(e.FieldsV1.Raw, []byte(`"f:loadBalancer"`)) {
			return e.Manager
		}
	}
	return ""
}

// keepEndpointFields keeps of an EndpointSlice its Service and, of each
// endpoint, its node and readiness: the addresses are kube-proxy's business.
func keepEndpointFields(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	kept := &discoveryv1.EndpointSlice{
		TypeMeta: s.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion,
			Labels: map[string]string{discoveryv1.LabelServiceName: s.Labels[discoveryv1.LabelServiceName]}},
		AddressType: s.AddressType,
	}
	for _, e := range s.Endpoints {
		kept.Endpoints = append(kept.Endpoints, discoveryv1.Endpoint{NodeName: e.NodeName,
			Conditions: discoveryv1.EndpointConditions{Ready: e.Conditions.Ready}})
	}
	return kept, nil
}

// keepNodeFields keeps of a Node what the mode reads (readiness, the label
// that excludes it, its addresses, whether it is being deleted): the rest,
// image lists above all, would cost memory for nothing.
func keepNodeFields(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	kept := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
			DeletionTimestamp: n.DeletionTimestamp},
		Status: corev1.NodeStatus{Addresses: n.Status.Addresses},
	}
	if v, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]; excluded {
		kept.Labels = map[string]string{corev1.LabelNodeExcludeBalancers: v}
	}
	if c := status.NodeReadyCondition(n); c != nil {
		kept.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
	}
	return kept, nil
}
