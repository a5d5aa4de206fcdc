package operator

import (
	"context"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
)

// Module is an operand the operator runs, or a mode of one. The operator
// knows modules only through this interface: the binary lists them, and the
// operator gives them the manager, and the leader Lease, they share.
type Module interface {
	// Name names the module: the operand label of its metrics, and its
	// ClusterOperator unless --cluster-operator-name names another.
	Name() string
	// AddToScheme adds the kinds the module reads and writes.
	AddToScheme(*runtime.Scheme) error
	// ConfigureManager adds what the module needs of the manager's cache
	// (the kinds it reads, and of each only what it reads) and client. A kind
	// is configured by one module only.
	ConfigureManager(*manager.Options) error
	// Add registers the module's controllers, which report through reporter.
	// What it asks the API server at start (whether a kind is served) it
	// retries until ctx ends (pkg/transient); it fails only on what lasts.
	Add(ctx context.Context, mgr manager.Manager, reporter publish.Reporter) error
}

// Configurable is a module with settings of its own: flags of `start`, and
// the operator's environment.
type Configurable interface {
	AddFlags(*pflag.FlagSet)
	// Complete checks the flags and reads the environment, once, before
	// anything starts; an error names the flag or the variable.
	Complete() error
}

// TLSGoverning is a module that decides the TLS security profile of the
// operator's own endpoints (its metrics): it sets serving from what it
// watches, on every replica, leader or not. Until it has, handshakes are
// refused. With no such module, the endpoints follow tlsprofile.Default.
type TLSGoverning interface {
	GovernTLS(ctx context.Context, mgr manager.Manager, serving *tlsprofile.Serving) error
}

// Installer is a module that writes, before the manager starts, what its
// watches need to exist (a CRD of its own).
type Installer interface {
	Install(context.Context, client.Client) error
}
