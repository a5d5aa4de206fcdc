package main

import (
	"context"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(metallbv1beta1.AddToScheme(s))
	utilruntime.Must(metallbv1beta2.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	utilruntime.Must(configv1.Install(s))
	return s
}()

// reader reads what the plugin tells of, noting what it may not read
// instead of failing: a user bound to view reads MetalLB's kinds, not the
// nodes.
type reader struct {
	c       client.Client
	cluster *explain.Cluster
}

// list lists a kind into its list; a kind refused or not served is noted
// and left empty. Other errors end the command.
func (r *reader) list(ctx context.Context, what string, list client.ObjectList, opts ...client.ListOption) error {
	err := r.c.List(ctx, list, opts...)
	return r.note(what, err)
}

func (r *reader) note(what string, err error) error {
	var reason string
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err):
		reason = "forbidden"
	case isNotServed(err):
		reason = "not served, MetalLB's CRDs are not installed"
	default:
		return fmt.Errorf("reading %s: %w", what, err)
	}
	if !slices.ContainsFunc(r.cluster.Unreadable, func(u explain.Unread) bool { return u.What == what }) {
		r.cluster.Unreadable = append(r.cluster.Unreadable, explain.Unread{What: what, Reason: reason})
	}
	return nil
}

// readCluster reads everything but what is a Service's own.
func readCluster(ctx context.Context, c client.Client, namespace string) (*explain.Cluster, error) {
	r := &reader{c: c, cluster: &explain.Cluster{Namespace: namespace}}
	cl := r.cluster
	in := client.InNamespace(namespace)
	var (
		pools metallbv1beta1.IPAddressPoolList
		l2    metallbv1beta1.L2AdvertisementList
		bgp   metallbv1beta1.BGPAdvertisementList
		peers metallbv1beta2.BGPPeerList
		l2s   metallbv1beta1.ServiceL2StatusList
		bgps  metallbv1beta1.ServiceBGPStatusList
		nodes corev1.NodeList
		nss   corev1.NamespaceList
		pods  corev1.PodList
		svcs  corev1.ServiceList
	)
	reads := []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{explain.KindPools, &pools, []client.ListOption{in}},
		{"l2advertisements", &l2, []client.ListOption{in}},
		{"bgpadvertisements", &bgp, []client.ListOption{in}},
		{"bgppeers", &peers, []client.ListOption{in}},
		{explain.KindL2Statuses, &l2s, []client.ListOption{in}},
		{explain.KindBGPStatuses, &bgps, []client.ListOption{in}},
		{explain.KindNodes, &nodes, nil},
		{explain.KindNamespaces, &nss, nil},
		{explain.KindSpeakers, &pods, []client.ListOption{in, client.MatchingLabels(manifests.SpeakerPods)}},
		{explain.KindServices, &svcs, nil},
	}
	for _, rd := range reads {
		if err := r.list(ctx, rd.what, rd.list, rd.opts...); err != nil {
			return nil, err
		}
	}
	if err := r.readWorkloads(ctx, namespace); err != nil {
		return nil, err
	}
	cl.Pools, cl.L2Ads, cl.BGPAds, cl.Peers = pools.Items, l2.Items, bgp.Items, peers.Items
	cl.L2Statuses, cl.BGPStatuses, cl.Nodes, cl.Namespaces, cl.Speakers = l2s.Items, bgps.Items, nodes.Items, nss.Items, pods.Items
	for _, s := range svcs.Items {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			cl.Services = append(cl.Services, s)
		}
	}
	return cl, nil
}

// readWorkloads reads the MetalLB object and the controller Deployment.
func (r *reader) readWorkloads(ctx context.Context, namespace string) error {
	m := &v1beta1.MetalLB{}
	switch err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: manifests.ObjectName}, m); {
	case err == nil:
		r.cluster.MetalLB, r.cluster.Conditions = m, m.Status.Conditions
	case apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		if err := r.readClusterOperator(ctx); err != nil {
			return err
		}
	default:
		if err := r.note(explain.KindMetalLB, err); err != nil {
			return err
		}
	}
	d := &appsv1.Deployment{}
	switch err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: manifests.ControllerName}, d); {
	case err == nil:
		r.cluster.Controller = d
	case apierrors.IsNotFound(err):
	default:
		return r.note(explain.KindController, err)
	}
	return nil
}

// readExplanation reads the cluster and one Service's own, and explains it.
func readExplanation(ctx context.Context, c client.Client, metallbNS, namespace, name string) (explain.Explanation, error) {
	cl, err := readCluster(ctx, c, metallbNS)
	if err != nil {
		return explain.Explanation{}, err
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return explain.Explanation{}, fmt.Errorf("reading Service %s/%s: %w", namespace, name, err)
	}
	r := &reader{c: c, cluster: cl}
	var slices discoveryv1.EndpointSliceList
	if err := r.list(ctx, explain.KindEndpoints, &slices, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return explain.Explanation{}, err
	}
	var events corev1.EventList
	if err := r.list(ctx, explain.KindEvents, &events, client.InNamespace(namespace),
		client.MatchingFields{"involvedObject.kind": "Service", "involvedObject.name": name}); err != nil {
		return explain.Explanation{}, err
	}
	return explain.Service(cl, explain.Target{Service: svc, Endpoints: slices.Items, Events: inOrder(events.Items, svc)}), nil
}

// inOrder keeps the Events of this Service, if one is given (not those of
// one deleted before it under its name), oldest first.
func inOrder(events []corev1.Event, svc *corev1.Service) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if svc == nil || e.InvolvedObject.UID == "" || e.InvolvedObject.UID == svc.UID {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return status.EventLastSeen(&a).Compare(status.EventLastSeen(&b)) })
	return out
}

// isNotServed tells a kind the API server does not serve.
func isNotServed(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// readClusterOperator reads the operator's conditions from its
// ClusterOperator, where OpenShift's API is served.
func (r *reader) readClusterOperator(ctx context.Context) error {
	co := &configv1.ClusterOperator{}
	err := r.c.Get(ctx, client.ObjectKey{Name: manifests.ModuleName}, co)
	if isNotServed(err) {
		return nil
	}
	if err := r.note("clusteroperators", err); err != nil || co.Name == "" {
		return err
	}
	for _, c := range co.Status.Conditions {
		r.cluster.Conditions = append(r.cluster.Conditions, metav1.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status),
			Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime})
	}
	return nil
}
