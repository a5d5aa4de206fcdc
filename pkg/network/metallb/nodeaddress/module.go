package nodeaddress

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
)

// Module is the node-address mode, as the operator runs it (pkg/operator's
// Module): the MetalLB module's plan tells it what to serve (SetScope).
type Module struct {
	r *Reconciler
}

// NewModule returns the mode, which runs only once a scope enables it.
func NewModule() *Module { return &Module{} }

// Name names the mode.
func (m *Module) Name() string { return "node-address" }

// AddToScheme adds nothing: the mode reads and writes built-in kinds only.
func (m *Module) AddToScheme(*runtime.Scheme) error { return nil }

// ConfigureManager has the manager's cache keep of Nodes what the mode reads,
// and their provider IDs, which tell the MetalLB module the platform: the
// rest, image lists above all, would cost memory for nothing. Its Services
// and EndpointSlices are in a cache of its own (newCache), only while it runs.
func (m *Module) ConfigureManager(opts *manager.Options) error {
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	maps.Copy(opts.Cache.ByObject, map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: KeepNodeFields}})
	return nil
}

// Add registers the mode's controller. It reports by Events on the Services
// it serves, not by a status of its own.
func (m *Module) Add(mgr manager.Manager, _ publish.Reporter) error {
	var err error
	m.r, err = add(mgr)
	return err
}

// SetScope changes what the mode serves.
func (m *Module) SetScope(s decide.Scope) { m.r.SetScope(s) }
