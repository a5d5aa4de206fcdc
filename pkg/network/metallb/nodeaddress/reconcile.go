package nodeaddress

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// Reconcile works out one Service's addresses and writes them when they
// differ from what the mode wrote; for a Service it does not serve, it removes
// what it wrote, if anything.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	scope := r.scope.Load()
	if scope == nil {
		return reconcile.Result{}, nil // SetScope will ask for every Service
	}
	svc := &corev1.Service{}
	if err := r.own.Get(ctx, req.NamespacedName, svc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var d decide.Decision
	if scope.Serves(svc) {
		var err error
		if d, err = r.addressesOf(ctx, svc, *scope); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.act(ctx, svc, d)
}

// addressesOf reads what the Service's decision needs and makes it.
func (r *Reconciler) addressesOf(ctx context.Context, svc *corev1.Service, scope decide.Scope) (decide.Decision, error) {
	eligible, err := r.eligibleNodes(ctx, scope)
	if err != nil {
		return decide.Decision{}, err
	}
	wanted, err := r.published(ctx, svc, eligible)
	if err != nil {
		return decide.Decision{}, err
	}
	rivals, err := r.rivals(ctx, svc, scope, eligible)
	if err != nil {
		return decide.Decision{}, err
	}
	return decide.AddressesAmong(svc, wanted, rivals), nil
}

// rivals are the older Services the mode serves that share a port with the
// Service, and, in turn, those older still that share one with them: what
// an older rival holds depends on its own rivals.
func (r *Reconciler) rivals(ctx context.Context, svc *corev1.Service, scope decide.Scope, eligible []decide.Node) ([]decide.Rival, error) {
	seen := map[types.UID]bool{svc.UID: true}
	var out []decide.Rival
	for next := []*corev1.Service{svc}; len(next) > 0; {
		s := next[0]
		next = next[1:]
		sharers, err := r.sharers(s)
		if err != nil {
			return nil, err
		}
		for _, x := range sharers {
			if seen[x.UID] || !decide.Older(x, s) || !scope.Serves(x) {
				continue
			}
			seen[x.UID] = true
			addrs, err := r.published(ctx, x, eligible)
			if err != nil {
				return nil, err
			}
			out = append(out, decide.Rival{Service: x, Addresses: addrs})
			next = append(next, x)
		}
	}
	return out, nil
}

// act writes the Service's ingress for the decision, unless the mode wrote
// it already, and tells each loss with a Warning Event on the Service.
func (r *Reconciler) act(ctx context.Context, svc *corev1.Service, d decide.Decision) error {
	ingress := decide.Ingress(d)
	write, writer := decide.NextWrite(svc, ingress)
	if writer != "" {
		r.events.Eventf(svc, nil, corev1.EventTypeWarning, "AddressedElsewhere", "AssignNodeAddress",
			"The node-address mode leaves this Service's addresses to %s, which wrote them. To have the mode serve it, give it the loadBalancerClass %s; to leave Services with no class to %s, set spec.nodeAddress.mode: Disabled on the MetalLB object",
			writer, decide.Class, writer)
	}
	if !write {
		return nil
	}
	// Forced: the only other writer it may replace is one of its own
	// class's (decide.NextWrite).
	err := r.client.Status().Apply(ctx, statusApply(svc, ingress), client.FieldOwner(FieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing the status of Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("wrote addresses", "addresses", len(d.Addresses), "losses", len(d.Losses))
	for _, l := range d.Losses {
		r.events.Eventf(svc, nil, corev1.EventTypeWarning, "AddressTaken", "AssignNodeAddress",
			"Node address %s is not published for this Service: Service %s, older, takes %s on it. Change the port of one of them, or give one another loadBalancerClass",
			l.Address, l.Winner, portList(l.Ports))
	}
	return nil
}

func portList(ports []decide.Port) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	}
	return strings.Join(s, ", ")
}

// published is the addresses the Service would publish with no rival.
func (r *Reconciler) published(ctx context.Context, svc *corev1.Service, eligible []decide.Node) ([]netip.Addr, error) {
	var endpointNodes map[string]bool
	if decide.Local(svc) {
		var err error
		if endpointNodes, err = r.endpointNodes(ctx, svc); err != nil {
			return nil, err
		}
	}
	return decide.Published(svc, eligible, endpointNodes), nil
}

// endpointNodes is the nodes where the Service has a ready endpoint.
func (r *Reconciler) endpointNodes(ctx context.Context, svc *corev1.Service) (map[string]bool, error) {
	var slices discoveryv1.EndpointSliceList
	err := r.own.List(ctx, &slices, client.InNamespace(svc.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.NodeName != nil && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				out[*e.NodeName] = true
			}
		}
	}
	return out, nil
}

// sharers are the other LoadBalancer Services that take one of the Service's ports.
func (r *Reconciler) sharers(svc *corev1.Service) ([]*corev1.Service, error) {
	seen := map[string]bool{string(svc.UID): true}
	var out []*corev1.Service
	for _, p := range decide.PortsOf(svc) {
		taking, err := r.own.servicesTaking(p)
		if err != nil {
			return nil, err
		}
		for _, s := range taking {
			if !seen[string(s.UID)] {
				seen[string(s.UID)] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// eligibleNodes returns the eligible nodes, worked out again only after a
// Node change that counts (nodeHandler) or a change of address type.
func (r *Reconciler) eligibleNodes(ctx context.Context, scope decide.Scope) ([]decide.Node, error) {
	gen := r.nodesGen.Load()
	r.mu.Lock()
	e := r.eligible
	r.mu.Unlock()
	if e != nil && e.gen == gen && e.addressType == string(scope.AddressType) {
		return e.nodes, nil
	}
	var list corev1.NodeList
	if err := r.own.List(ctx, &list); err != nil {
		return nil, err
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	e = &eligibleNodes{gen: gen, addressType: string(scope.AddressType), nodes: decide.Eligible(nodes, scope.AddressType)}
	r.mu.Lock()
	r.eligible = e
	r.mu.Unlock()
	return e.nodes, nil
}
