package main

import (
	"context"
	"time"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
)

// bgpSessionStates is frr-k8s's report of each node's BGP sessions; where
// frr-k8s does not run, the kind is not served and there are none.
var bgpSessionStates = manifests.BGPSessionStateKind.GroupVersion().WithKind(manifests.BGPSessionStateKind.Kind + "List")

// readStatus reads the installation, its sessions and its findings.
func readStatus(ctx context.Context, c client.Client, namespace string) (explain.Report, error) {
	cl, err := readCluster(ctx, c, namespace)
	if err != nil {
		return explain.Report{}, err
	}
	r := &reader{c: c, cluster: cl}
	var states metallbv1beta1.ConfigurationStateList
	if err := r.list(ctx, "configurationstates", &states, client.InNamespace(namespace)); err != nil {
		return explain.Report{}, err
	}
	sessions, err := r.sessions(ctx)
	if err != nil {
		return explain.Report{}, err
	}
	pre, err := r.preflight(ctx)
	if err != nil {
		return explain.Report{}, err
	}
	var failed corev1.EventList
	if err := r.list(ctx, explain.KindEvents, &failed, client.MatchingFields{"reason": explain.ReasonAnnounceFailed}); err != nil {
		return explain.Report{}, err
	}
	snapshot := &plan.Snapshot{Advertisements: plan.AdvertisementsOf(cl.BGPAds, cl.L2Ads), Peers: plan.PeersOf(cl.Peers),
		ConfigStates: plan.ConfigStatesOf(states.Items), Preflight: pre,
		Reports: plan.Reports{Sessions: sessions.plan, AnnounceFailures: plan.AnnounceFailuresOf(failed.Items)}}
	for i := range snapshot.Reports.AnnounceFailures {
		f := &snapshot.Reports.AnnounceFailures[i]
		f.Announced, f.Gone = cl.AnnouncesInLayer2(f.Service), !cl.HasService(f.Service, f.ServiceUID)
	}
	findings := plan.ConfigFindings(snapshot, time.Now())
	return explain.Status(cl, sessions.report, findings), nil
}

// sessionReads are frr-k8s's BGPSessionStates, as the report prints them
// and as the findings read them.
type sessionReads struct {
	report []explain.SessionReport
	plan   []plan.Session
}

// sessions reads frr-k8s's BGPSessionStates, in every namespace.
func (r *reader) sessions(ctx context.Context) (sessionReads, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(bgpSessionStates)
	err := r.c.List(ctx, list)
	if isNotServed(err) {
		return sessionReads{}, nil
	}
	if err := r.note("bgpsessionstates", err); err != nil {
		return sessionReads{}, err
	}
	var out sessionReads
	for _, s := range list.Items {
		field := func(name string) string { v, _, _ := unstructured.NestedString(s.Object, "status", name); return v }
		out.report = append(out.report, explain.SessionReport{Node: field("node"), Peer: field("peer"), BGP: field("bgpStatus"), BFD: field("bfdStatus")})
	}
	out.plan = plan.SessionsOf(list.Items)
	return out, nil
}

// preflight reads what the checks beyond MetalLB's objects read: kube-proxy's
// configuration and the Service networks (a user bound to view reads
// neither the nodes nor the ServiceCIDRs: those checks are left out, and
// said so).
func (r *reader) preflight(ctx context.Context) (plan.Preflight, error) {
	cl := r.cluster
	pre := plan.Preflight{Pools: plan.PoolsOf(cl.Pools), NodesRead: cl.Readable(explain.KindNodes)}
	for i := range cl.Nodes {
		pre.Nodes = append(pre.Nodes, plan.NodeFactsOf(&cl.Nodes[i]))
	}
	cm := &corev1.ConfigMap{}
	err := r.c.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "kube-proxy"}, cm)
	switch {
	case err == nil:
		conf := cm.Data["config.conf"]
		pre.KubeProxyConfig = &conf
	case apierrors.IsNotFound(err):
	default:
		if err := r.note("configmaps in kube-system", err); err != nil {
			return pre, err
		}
	}
	var cidrs networkingv1.ServiceCIDRList
	if err := r.list(ctx, "servicecidrs", &cidrs); err != nil {
		return pre, err
	}
	pre.ServiceNetworks = plan.ServiceNetworksOf(cidrs.Items)
	return pre, nil
}
