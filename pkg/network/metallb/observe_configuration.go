package metallb

import (
	"context"
	"fmt"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// readConfigs lists the configuration objects of every kind, in every
// namespace; only their metadata is cached. Before MetalLB's CRDs are served
// there are none.
func (r *Reconciler) readConfigs(ctx context.Context, s *plan.Snapshot) error {
	r.startConfigInformers(ctx)
	for _, gvk := range manifests.ConfigKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := r.client.List(ctx, list)
		if meta.IsNoMatchError(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		s.Configs.Served = true
		s.Configs.Add(gvk, list.Items, r.opts.Namespace)
	}
	return nil
}

// startConfigInformers has the cache start, all at once, the informers that
// the reads of MetalLB's configuration then wait for one by one. The API
// server answers the first watch of a kind whose CRD is new with a 429 while
// it fills its watch cache, and the informer tries again a second later: one
// kind after the other, that was 7-8 s of an activation on a new cluster
// (the audit log of TestTakeoverRefusedOnOddInput). What cannot start yet (a
// kind not served) is the reads' to report. Once the kinds are watched
// (watchConfigs, after the first read), their informers run: nothing to do.
func (r *Reconciler) startConfigInformers(ctx context.Context) {
	r.watchConfigStatesEarly(ctx)
	if r.watching[manifests.IPAddressPoolKind] {
		return
	}
	if _, err := r.client.RESTMapper().RESTMapping(manifests.IPAddressPoolKind.GroupKind(), manifests.IPAddressPoolKind.Version); err != nil {
		return
	}
	var informed []client.Object
	for _, gvk := range manifests.ConfigKinds {
		informed = append(informed, objects.Metadata(gvk))
	}
	if r.everyKind {
		informed = append(informed, typedConfigObjects()...)
	}
	for _, o := range informed {
		_, _ = r.cache.GetInformer(ctx, o, cache.BlockUntilSynced(false))
	}
}

// watchConfigStatesEarly has the metadata of ConfigurationStates watched
// before anything asks for MetalLB: their typed informer starts with every
// rendered kind's, and its first watch of the kind would wait for the 429's
// second (above), 1.1 s of the first activation's 1.17 against 39 ms for the
// next (../shared/sidebyside, 2026-12-07, the audit log of every metallb.io
// request). Asked at each read until then (once started, a look in the
// cache's map): the kind is served a moment after the configuration's kinds
// on a new cluster.
func (r *Reconciler) watchConfigStatesEarly(ctx context.Context) {
	if !r.everyKind {
		_, _ = r.cache.GetInformer(ctx, objects.Metadata(manifests.ConfigurationStateKind), cache.BlockUntilSynced(false))
	}
}

// typedConfigObjects are the kinds of what the checks read of MetalLB's
// configuration and reports, whole (the metadata tells whether MetalLB is
// asked for): their informers start with every rendered kind's.
func typedConfigObjects() []client.Object {
	return []client.Object{&metallbv1beta1.BGPAdvertisement{}, &metallbv1beta1.L2Advertisement{}, &metallbv1beta2.BGPPeer{},
		&metallbv1beta1.ConfigurationState{}, &metallbv1beta1.IPAddressPool{}}
}

// readAdvertisements reads MetalLB's advertisements, BGPPeers and pools'
// addresses in its namespace, once their kinds are served and their
// informers run (not with FoundationOnly).
func (r *Reconciler) readAdvertisements(ctx context.Context, s *plan.Snapshot) error {
	if !s.Configs.Served || s.FoundationOnly {
		return nil
	}
	in := client.InNamespace(r.opts.Namespace)
	var bgp metallbv1beta1.BGPAdvertisementList
	var l2 metallbv1beta1.L2AdvertisementList
	var peers metallbv1beta2.BGPPeerList
	var pools metallbv1beta1.IPAddressPoolList
	for _, list := range []client.ObjectList{&bgp, &l2, &peers, &pools} {
		if err := ignoreNoMatch(r.client.List(ctx, list, in)); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
	}
	s.Advertisements = plan.AdvertisementsOf(bgp.Items, l2.Items)
	s.Peers = plan.PeersOf(peers.Items)
	s.Preflight.Pools = plan.PoolsOf(pools.Items)
	return nil
}

// readConfigStates reads MetalLB's components' reports on the configuration
// they loaded, once their kind is served: MetalLB's CRDs before v0.16, which
// a hand install being taken over may have, lack it.
func (r *Reconciler) readConfigStates(ctx context.Context, s *plan.Snapshot) error {
	if !s.Configs.Served || s.FoundationOnly {
		return nil
	}
	var list metallbv1beta1.ConfigurationStateList
	if err := ignoreNoMatch(r.client.List(ctx, &list, client.InNamespace(r.opts.Namespace))); err != nil {
		return fmt.Errorf("listing ConfigurationStates: %w", err)
	}
	s.ConfigStates = plan.ConfigStatesOf(list.Items)
	return nil
}

// ignoreNoMatch drops the error of reading a kind that is not served.
func ignoreNoMatch(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}
