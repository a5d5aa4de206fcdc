package metallb

import (
	"context"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/spf13/pflag"
	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metallbv1beta2 "go.universe.tf/metallb/api/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/version"
)

// Name names the module: its metrics' operand, and its ClusterOperator.
const Name = manifests.ModuleName

// Options are the module's settings: the plan's, and the clock that tells
// the reconcile the time.
type Options struct {
	plan.Options
	// Clock tells the time; nil is the real one.
	Clock clock.PassiveClock
}

// Module is the MetalLB module, as the operator runs it (pkg/operator's
// Module): it hands the node-address mode what its plan lets it serve.
type Module struct {
	opts        Options
	inventory   manifests.Inventory
	nodeAddress *nodeaddress.Module
	reconciler  *Reconciler
}

// NewModule returns the module with its flags' defaults.
func NewModule(nodeAddress *nodeaddress.Module) *Module {
	return &Module{nodeAddress: nodeAddress, opts: Options{Options: plan.Options{
		Environment:      manifests.Environment{Namespace: manifests.DefaultNamespace, Webhooks: true},
		AllowedPlatforms: plan.DefaultAllowedPlatforms,
		HungAfter:        10 * time.Minute,
	}}}
}

// QuietAfter is how long an operator with nothing left to do has written
// nothing: no write waits longer than StatusEvery, and a rollout's progress is
// written as it moves (status.Track), so 7 s leave room for the reconciles a
// write sets off. What counts an operator's writes waits for it.
const QuietAfter = 7 * time.Second

// StatusEvery bounds how often the statuses (the MetalLB objects' and the
// ClusterOperator's) are written: a change less than StatusEvery after the
// last write waits for the rest of it, and is written then if it still
// stands. A spec or a configuration flapping many times a second is written
// at most twice a second, each state that lasted being reported, the last
// one included, at most half a second late.
const StatusEvery = 500 * time.Millisecond

// newModule returns the module with its settings given, complete.
func newModule(opts Options, nodeAddress *nodeaddress.Module) (*Module, error) {
	m := &Module{opts: opts, nodeAddress: nodeAddress}
	return m, m.complete()
}

// Name names the module.
func (m *Module) Name() string { return Name }

// AddFlags binds the module's settings to flags of `start`.
func (m *Module) AddFlags(fs *pflag.FlagSet) {
	o := &m.opts
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace MetalLB runs in")
	fs.StringVar(&o.Platform, "platform", o.Platform, `the platform, such as "BareMetal", instead of detecting it (from the Infrastructure object on OpenShift, else from the Nodes' provider IDs)`)
	fs.StringSliceVar(&o.AllowedPlatforms, "allowed-platforms", o.AllowedPlatforms, "the platforms MetalLB is deployed on")
	fs.DurationVar(&o.HungAfter, "rollout-hung-timeout", o.HungAfter, "how long a rollout may make no progress before Degraded says RolloutHung")
	fs.BoolVar(&o.Webhooks, "metallb-webhooks", o.Webhooks, "have MetalLB's controller serve its validating webhooks; without them only the CRDs' schemas check MetalLB's objects")
}

// Complete checks the flags, reads the images and the release from the
// operator's environment, and works out once what the module renders.
func (m *Module) Complete() error {
	o := &m.opts
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("--namespace %q is not a valid namespace name: %s", o.Namespace, errs[0])
	}
	if o.HungAfter <= 0 {
		return fmt.Errorf("--rollout-hung-timeout %s must be positive", o.HungAfter)
	}
	if len(o.AllowedPlatforms) == 0 {
		return fmt.Errorf("--allowed-platforms is empty: MetalLB would never be deployed")
	}
	images, err := manifests.ImagesFromEnv(os.Getenv, version.Version)
	if err != nil {
		return err
	}
	o.Images = images
	return m.complete()
}

// complete works out the inventory, once: what the module renders.
func (m *Module) complete() error {
	var err error
	m.inventory, err = manifests.InventoryOf(m.opts.Environment)
	return err
}

// AddToScheme adds the MetalLB object's kind, and MetalLB's own kinds: the
// module reads its advertisements, BGPPeers and reports.
func (m *Module) AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{v1beta1.AddToScheme, metallbv1beta1.AddToScheme, metallbv1beta2.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// ConfigureManager has the manager's cache hold, of the kinds the module
// owns, only its own objects (not every Secret or Role of the cluster), and
// of each only what the module reads; the module reads what it owns as
// unstructured objects, from that cache too.
func (m *Module) ConfigureManager(opts *manager.Options) error {
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	maps.Copy(opts.Cache.ByObject, cacheByObject(m.inventory, m.opts.Namespace))
	if opts.Cache.DefaultTransform == nil {
		opts.Cache.DefaultTransform = keepWhatIsRead
	}
	if opts.Client.Cache == nil {
		opts.Client.Cache = &client.CacheOptions{}
	}
	opts.Client.Cache.Unstructured = true
	return nil
}

// Install creates the MetalLB object's CRD where none exists (InstallAPI).
func (m *Module) Install(ctx context.Context, c client.Client) error { return InstallAPI(ctx, c) }

// Add registers the module's controller.
func (m *Module) Add(ctx context.Context, mgr manager.Manager, reporter publish.Reporter) error {
	var err error
	m.reconciler, err = add(ctx, mgr, m.opts, m.inventory, reporter, m.nodeAddress)
	return err
}
