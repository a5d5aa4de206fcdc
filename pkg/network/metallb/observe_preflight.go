package metallb

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// kubeProxyConfig is kube-proxy's configuration, where kubeadm and most
// installers put it: whether it runs IPVS without strictARP is a finding.
var kubeProxyConfig = client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "kube-proxy"}

// kubeProxyConfigOnly selects kubeProxyConfig among kube-system's ConfigMaps,
// the only one the operator caches there.
var kubeProxyConfigOnly = fields.OneTermEqualSelector("metadata.name", kubeProxyConfig.Name)

func isKubeProxyConfig(o client.Object) bool {
	return o.GetNamespace() == kubeProxyConfig.Namespace && o.GetName() == kubeProxyConfig.Name
}

// readPreflight reads what the checks beyond MetalLB's objects read but the
// nodes and the pools (readPlatform, readAdvertisements): kube-proxy's
// configuration and the cluster's Service networks; nothing with
// FoundationOnly, whose plans check no pool: their informers have not started.
func (r *Reconciler) readPreflight(ctx context.Context, s *plan.Snapshot) error {
	if s.FoundationOnly {
		return nil
	}
	cm := objects.Empty(objects.ConfigMap)
	switch err := r.cache.Get(ctx, kubeProxyConfig, cm); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		if conf, ok, _ := unstructured.NestedString(cm.Object, "data", "config.conf"); ok {
			s.Preflight.KubeProxyConfig = &conf
		}
	}
	if !r.serviceCIDRAPI {
		return nil
	}
	var cidrs networkingv1.ServiceCIDRList
	if err := r.cache.List(ctx, &cidrs); err != nil {
		return err
	}
	s.Preflight.ServiceNetworks = plan.ServiceNetworksOf(cidrs.Items)
	return nil
}
