package nodeaddress

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
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

// ConfigureManager changes nothing: the Services, EndpointSlices and Nodes the
// mode reads are in a cache of its own (newCache), only while it runs.
func (m *Module) ConfigureManager(*manager.Options) error { return nil }

// Add registers the mode's controller. It reports by Events on the Services
// it serves, not by a status of its own.
func (m *Module) Add(_ context.Context, mgr manager.Manager, _ publish.Reporter) error {
	var err error
	m.r, err = add(mgr)
	return err
}

// SetScope changes what the mode serves.
func (m *Module) SetScope(s decide.Scope) { m.r.SetScope(s) }
