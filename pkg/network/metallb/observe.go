package metallb

import (
	"context"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodecache"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// observe reads the snapshot, as the plan of now needs it.
func (r *Reconciler) observe(ctx context.Context, now time.Time) (*plan.Snapshot, error) {
	s := &plan.Snapshot{Maintenance: r.maintenance.Report(), FRRK8sLeftAt: r.frrK8sLeftAt, FoundationOnly: !r.everyKind}
	for _, read := range []func(context.Context, *plan.Snapshot) error{
		r.readMetalLBs, r.readPlatform, r.readOwned, r.readMonitoring, r.readForeign, r.readWorkloads, r.readMemberlistKeys,
		r.readMemberlistFound, r.readConfigs,
		r.readAdvertisements, r.readConfigStates, r.readClasses, r.readClusterOperator, r.readClusterTLSProfile,
		r.readPlatformFRRK8s, r.readPreflight, r.readReports,
	} {
		if err := read(ctx, s); err != nil {
			return nil, err
		}
	}
	if plan.MayBeHung(s.Tracking, r.opts, now) || plan.FRRK8sMayBeLeaving(s, r.opts.Namespace) {
		if err := r.readNodePods(ctx, s); err != nil {
			return nil, err
		}
	}
	if plan.PodsMissing(s) {
		if err := r.readPodCreations(ctx, s); err != nil {
			return nil, err
		}
	}
	if s.OwnedObject(objects.Secret, r.opts.Namespace, manifests.MemberlistSecret) == nil {
		s.MemberlistKey = manifests.NewMemberlistKey()
	}
	return s, nil
}

func (r *Reconciler) readMetalLBs(ctx context.Context, s *plan.Snapshot) error {
	var list v1beta1.MetalLBList
	if err := r.client.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.Namespace == r.opts.Namespace && o.Name == manifests.ObjectName {
			s.MetalLB = o
		} else {
			s.Ignored = append(s.Ignored, o)
		}
	}
	return nil
}

// readPlatform reads what the platform is decided from: nothing with
// --platform, Infrastructure/cluster on OpenShift, else the Nodes.
func (r *Reconciler) readPlatform(ctx context.Context, s *plan.Snapshot) error {
	nodes, err := nodecache.All(ctx, r.cache)
	if err != nil {
		return err
	}
	s.Platform.NodeCount = len(nodes)
	s.Preflight.NodesRead, s.Preflight.Nodes = true, make([]plan.NodeFacts, 0, len(nodes))
	for _, n := range nodes {
		f := n.Preflight
		f.Name = n.Name
		s.Preflight.Nodes = append(s.Preflight.Nodes, f)
	}
	if r.opts.Platform != "" {
		return nil
	}
	if r.openshift {
		infra := &configv1.Infrastructure{}
		err := r.client.Get(ctx, client.ObjectKey{Name: objects.ClusterConfigName}, infra)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && infra.Status.PlatformStatus != nil && infra.Status.PlatformStatus.Type != "" {
			s.Platform.Infrastructure = string(infra.Status.PlatformStatus.Type)
			return nil
		}
	}
	for _, n := range nodes {
		s.Platform.Nodes = append(s.Platform.Nodes, plan.NodeProvider{Name: n.Name, ProviderID: n.ProviderID})
	}
	return nil
}

// readOwned lists the objects of every kind the module renders that carry the
// ownership labels, and the tracking kept on the namespace among them.
func (r *Reconciler) readOwned(ctx context.Context, s *plan.Snapshot) error {
	s.Owned, s.Kinds = map[objects.Key]*unstructured.Unstructured{}, r.kindsRead()
	if err := listOwned(ctx, r.client, s.Kinds, s.Owned); err != nil {
		return err
	}
	if ns := s.OwnedObject(objects.Namespace, "", r.opts.Namespace); ns != nil {
		s.Tracking, s.TrackingVersion = trackingOf(ns), ns.GetResourceVersion()
		if r.tracked.newerThan(s.TrackingVersion) {
			s.Tracking, s.TrackingVersion = r.tracked.tracking, r.tracked.resourceVersion
		}
	}
	return nil
}

// readClasses reads which priority and runtime classes exist when the MetalLB
// object names one, and from then on watches them: one may appear and make
// the spec valid. An object that names none costs no watch of them.
func (r *Reconciler) readClasses(ctx context.Context, s *plan.Snapshot) error {
	if !namesClasses(s.MetalLB) {
		return nil
	}
	for gvk, kind := range classKinds {
		err := r.watchOnce(gvk, func() source.Source { return source.Kind(r.cache, kind, handler.EnqueueRequestsFromMapFunc(enqueue)) })
		if err != nil {
			return err
		}
	}
	var priority schedulingv1.PriorityClassList
	if err := r.client.List(ctx, &priority); err != nil {
		return err
	}
	var runtime nodev1.RuntimeClassList
	if err := r.client.List(ctx, &runtime); err != nil {
		return err
	}
	s.PriorityClasses, s.RuntimeClasses = sets.New[string](), sets.New[string]()
	for _, c := range priority.Items {
		s.PriorityClasses.Insert(c.Name)
	}
	for _, c := range runtime.Items {
		s.RuntimeClasses.Insert(c.Name)
	}
	return nil
}

// classKinds are the kinds of the classes a MetalLB object may name.
var classKinds = map[schema.GroupVersionKind]client.Object{
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"): &schedulingv1.PriorityClass{},
	nodev1.SchemeGroupVersion.WithKind("RuntimeClass"):        &nodev1.RuntimeClass{},
}

// namesClasses tells whether a MetalLB object names a priority or runtime
// class (manifests.CheckReferences checks that they exist).
func namesClasses(o *v1beta1.MetalLB) bool {
	if o == nil {
		return false
	}
	var configs []*v1beta1.Config
	if c := o.Spec.ControllerConfig; c != nil {
		configs = append(configs, c)
	}
	if c := o.Spec.SpeakerConfig; c != nil {
		configs = append(configs, &c.Config)
	}
	for _, c := range configs {
		if c.PriorityClassName != "" || c.RuntimeClassName != "" {
			return true
		}
	}
	return false
}

func (r *Reconciler) readNodePods(ctx context.Context, s *plan.Snapshot) error {
	for _, d := range []struct {
		selector labels.Set
		into     *[]corev1.Pod
	}{{manifests.SpeakerPods, &s.SpeakerPods}, {manifests.FRRK8sPods, &s.FRRK8sPods}} {
		var pods corev1.PodList
		if err := r.client.List(ctx, &pods, client.InNamespace(r.opts.Namespace), client.MatchingLabels(d.selector)); err != nil {
			return err
		}
		*d.into = pods.Items
	}
	return nil
}

// readPodCreations reads the DaemonSet controller's Events on creating the
// pods of the DaemonSets in MetalLB's namespace.
func (r *Reconciler) readPodCreations(ctx context.Context, s *plan.Snapshot) error {
	var events corev1.EventList
	if err := r.client.List(ctx, &events, client.InNamespace(r.opts.Namespace)); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.Reason == reasonFailedCreate || e.Reason == reasonSuccessfulCreate {
			s.PodCreations = append(s.PodCreations, plan.PodCreation{DaemonSet: e.InvolvedObject.UID,
				Failed: e.Reason == reasonFailedCreate, Message: e.Message, At: status.EventLastSeen(&e)})
		}
	}
	return nil
}

func (r *Reconciler) readClusterOperator(ctx context.Context, s *plan.Snapshot) error {
	if r.reporter.ClusterOperator == nil {
		return nil
	}
	var err error
	s.ClusterOperator, err = r.reporter.ClusterOperator.Get(ctx)
	return err
}

// readClusterTLSProfile reads the TLS security profile of OpenShift's
// APIServer/cluster, where its API exists.
func (r *Reconciler) readClusterTLSProfile(ctx context.Context, s *plan.Snapshot) error {
	if !r.apiServerAPI {
		return nil
	}
	apiServer := &configv1.APIServer{}
	err := r.client.Get(ctx, client.ObjectKey{Name: objects.ClusterConfigName}, apiServer)
	if err == nil {
		s.ClusterTLSProfile = apiServer.Spec.TLSSecurityProfile
	}
	return client.IgnoreNotFound(err)
}

// readPlatformFRRK8s reads whether OpenShift's network operator runs frr-k8s
// (its Network object lists FRR among spec.additionalRoutingCapabilities'
// providers), and the pod networks that object names.
func (r *Reconciler) readPlatformFRRK8s(ctx context.Context, s *plan.Snapshot) error {
	if !r.networkAPI {
		return nil
	}
	network := objects.Empty(objects.Network)
	err := r.client.Get(ctx, client.ObjectKey{Name: objects.ClusterConfigName}, network)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	providers, _, _ := unstructured.NestedStringSlice(network.Object, "spec", "additionalRoutingCapabilities", "providers")
	s.PlatformFRRK8s = &manifests.PlatformFRRK8s{Namespace: manifests.OpenShiftFRRK8sNamespace, Enabled: slices.Contains(providers, "FRR")}
	s.Preflight.ClusterNetworks = plan.ClusterNetworksOf(network)
	return nil
}
