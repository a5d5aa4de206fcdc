package metallb

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

// GovernTLS keeps the operator's own TLS endpoints on MetalLB's profile
// (manifests.TLSProfileFor), as MetalLB's pods are: on every replica, leader
// or not, from the manager's cache, a change taking effect at the next
// handshake.
func (m *Module) GovernTLS(ctx context.Context, mgr manager.Manager, serving *tlsprofile.Serving) error {
	apiServerAPI, err := served(ctx, mgr, objects.APIServer)
	if err != nil {
		return err
	}
	return mgr.Add(&servingTLS{cache: mgr.GetCache(), namespace: m.opts.Namespace, apiServerAPI: apiServerAPI,
		serving: serving, log: ctrl.Log.WithName("tls")})
}

// servingTLS sets the operator's serving profile from the MetalLB object and
// OpenShift's APIServer whenever either changes.
type servingTLS struct {
	cache        cache.Cache
	namespace    string
	apiServerAPI bool
	serving      *tlsprofile.Serving
	log          logr.Logger

	mu sync.Mutex // held by update: events come from two informers
}

// NeedLeaderElection is false: a replica waiting for the Lease serves its
// metrics too.
func (*servingTLS) NeedLeaderElection() bool { return false }

func (s *servingTLS) Start(ctx context.Context) error {
	kinds := []client.Object{&v1beta1.MetalLB{}}
	if s.apiServerAPI {
		kinds = append(kinds, &configv1.APIServer{})
	}
	changed := func(any) { s.update(ctx) }
	// Of an update, only a change of spec (its generation): the MetalLB
	// object's status is written at every step of a rollout.
	specChanged := func(old, o any) {
		if old.(client.Object).GetGeneration() != o.(client.Object).GetGeneration() {
			s.update(ctx)
		}
	}
	for _, kind := range kinds {
		var informer cache.Informer
		err := transient.Retry(ctx, s.log, "watching the kinds of the TLS profile", func(ctx context.Context) (err error) {
			informer, err = s.cache.GetInformer(ctx, kind)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: changed,
			UpdateFunc: specChanged, DeleteFunc: changed}); err != nil {
			return err
		}
	}
	s.update(ctx) // for a cluster with neither object
	<-ctx.Done()
	return nil
}

// update sets the profile the objects ask for. A MetalLB object whose
// profile is wrong leaves the one served before (the reconcile says what is
// wrong, in its conditions), or, before any, the cluster's.
func (s *servingTLS) update(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var env manifests.Environment
	apiServer := &configv1.APIServer{}
	if s.apiServerAPI && s.cache.Get(ctx, client.ObjectKey{Name: objects.ClusterConfigName}, apiServer) == nil {
		env.ClusterTLSProfile = apiServer.Spec.TLSSecurityProfile
	}
	var own *configv1.TLSSecurityProfile
	obj := &v1beta1.MetalLB{}
	if s.cache.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: manifests.ObjectName}, obj) == nil {
		own = obj.Spec.TLSSecurityProfile
	}
	p, err := manifests.TLSProfileFor(env, own)
	current, served := s.serving.Current()
	if err != nil {
		if served {
			return
		}
		p, _ = manifests.TLSProfileFor(env, nil)
	}
	if !served || !current.Equal(p) {
		s.serving.Set(p)
		s.log.Info("the operator's TLS endpoints follow a new profile", "profile", p.Type, "minVersion", p.MinVersion)
	}
}
