package metallb

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
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
// configuration (once the ConfigMaps' informer runs: not with
// FoundationOnly) and the cluster's Service networks.
func (r *Reconciler) readPreflight(ctx context.Context, s *plan.Snapshot) error {
	if !s.FoundationOnly {
		if err := r.readKubeProxyConfig(ctx, s); err != nil {
			return err
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

func (r *Reconciler) readKubeProxyConfig(ctx context.Context, s *plan.Snapshot) error {
	cm := objects.Empty(objects.ConfigMap)
	err := r.cache.Get(ctx, kubeProxyConfig, cm)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if conf, ok, _ := unstructured.NestedString(cm.Object, "data", "config.conf"); ok {
		s.Preflight.KubeProxyConfig = &conf
	}
	return nil
}
