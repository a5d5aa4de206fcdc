package operator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
	"github.com/bmlb/cluster-network-operator/pkg/transient"
	"github.com/bmlb/cluster-network-operator/pkg/version"
)

// LeaseName is the name of the Lease the operator's replicas compete for.
const LeaseName = "cluster-network-operator"

var logLevels = map[string]zapcore.Level{
	"debug": zapcore.DebugLevel,
	"info":  zapcore.InfoLevel,
	"warn":  zapcore.WarnLevel,
	"error": zapcore.ErrorLevel,
}

// Run runs the operator, with options Validate accepted, until ctx ends. It
// returns early, with an error that names the problem, when the API server
// cannot be used.
func Run(ctx context.Context, o Options) error {
	log := newLogger(o)
	ctrl.SetLogger(log)
	klog.SetLogger(log) // client-go, leader election included, logs through the same sink

	cfg, err := loadConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	if err := waitForAPIServer(ctx, cfg, o, log); err != nil {
		return err
	}
	scheme, err := NewScheme(o.Modules...)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	timings, err := leaseTimingsFor(ctx, c, o, log)
	if err != nil {
		return err
	}
	identity, err := leaderIdentity(os.Getenv)
	if err != nil {
		return err
	}
	// The leader Lease's Events are sent until the manager has stopped, which
	// is after it released the Lease.
	events, stopEvents := context.WithCancel(context.WithoutCancel(ctx))
	defer stopEvents()
	serving := &tlsprofile.Serving{}
	mgr, err := newManager(events, cfg, o, scheme, timings, identity, serving)
	if err != nil {
		return err
	}
	if err := AddModules(ctx, mgr, c, o, serving); err != nil {
		return err
	}
	log.Info("starting", "version", version.Version, "leaderElection", o.LeaderElect, "identity", identity,
		"leaseDuration", timings.LeaseDuration, "renewDeadline", timings.RenewDeadline, "retryPeriod", timings.RetryPeriod)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator stopped: %w", err)
	}
	log.Info("stopped")
	return nil
}

// AddModules installs, with c, what each module's watches need, and
// registers its controllers with the reporter of its status; the first
// module that governs the TLS profile (TLSGoverning) sets serving's. It
// retries what fails on an error that passes (transient.Retry): a 500 at
// start is no reason to crash-loop.
func AddModules(ctx context.Context, mgr manager.Manager, c client.Client, o Options, serving *tlsprofile.Serving) error {
	log := mgr.GetLogger()
	if err := governTLS(ctx, mgr, o.Modules, serving); err != nil {
		return err
	}
	clusterOperatorAPI, err := transient.Served(ctx, log, mgr.GetRESTMapper(), objects.ClusterOperator.GroupKind())
	if err != nil {
		return err
	}
	for _, m := range o.Modules {
		if i, ok := m.(Installer); ok {
			err := transient.Retry(ctx, log, "installing the API of "+m.Name(), func(ctx context.Context) error { return i.Install(ctx, c) })
			if err != nil {
				return fmt.Errorf("cannot install the API of %s: %v", m.Name(), err)
			}
		}
		reporter := publish.Reporter{Operand: m.Name()}
		if clusterOperatorAPI {
			reporter.ClusterOperator = &publish.ClusterOperator{Client: mgr.GetClient(), Name: cmp.Or(o.ClusterOperator, m.Name()),
				Clock: clock.RealClock{}, OperatorNamespace: o.OperatorNamespace}
		}
		if err := m.Add(ctx, mgr, reporter); err != nil {
			return fmt.Errorf("cannot add %s: %v", m.Name(), err)
		}
	}
	return nil
}

// governTLS has the first module that governs the TLS profile set serving's,
// or, with none, sets tlsprofile.Default.
func governTLS(ctx context.Context, mgr manager.Manager, modules []Module, serving *tlsprofile.Serving) error {
	for _, m := range modules {
		if g, ok := m.(TLSGoverning); ok {
			return g.GovernTLS(ctx, mgr, serving)
		}
	}
	p, err := tlsprofile.Of(nil, nil)
	serving.Set(p)
	return err
}

// newLogger logs as controller-runtime's zap logger does in production, but
// for its sampler, which ctrlzap.New always adds: its counters take 448 KiB,
// a twentieth of the operator's live heap, to thin out a flood of one
// message that the operator's rate-limited reconciles do not make.
func newLogger(o Options) logr.Logger {
	rfc3339 := func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.RFC3339TimeEncoder }
	format := ctrlzap.JSONEncoder(rfc3339)
	if o.LogFormat == "console" {
		format = ctrlzap.ConsoleEncoder(rfc3339)
	}
	var encoder ctrlzap.Options
	format(&encoder)
	sink := zapcore.AddSync(os.Stderr)
	core := zapcore.NewCore(&ctrlzap.KubeAwareEncoder{Encoder: encoder.Encoder}, sink, zap.NewAtomicLevelAt(logLevels[o.LogLevel]))
	return zapr.NewLogger(zap.New(core, zap.ErrorOutput(sink), zap.AddStacktrace(zapcore.ErrorLevel)))
}

// Client rates: kube-controller-manager's defaults. One activation writes
// some 40 objects, and reads none (the caches hold them): the burst lets them
// all go at once, and the rate bounds what a loop of failing reconciles, which
// back off anyway, could ask of the API server. client-go's own 5/10 made an
// activation take seconds.
const (
	clientQPS   = 50
	clientBurst = 100
)

// loadConfig reads the kubeconfig named by the flag, else $KUBECONFIG, else the
// in-cluster service account.
func loadConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load a kubeconfig (--kubeconfig %q): %v", path, err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	// Responses gzipped for a client in the same cluster cost the API server
	// CPU, and the operator a 32 KiB window for every watch it holds open.
	cfg.DisableCompression = true
	cfg.Dial = transient.PatientDial(cfg.Dial)
	return cfg, nil
}

// apiServerTimeout bounds each try to reach the API server: one that accepts
// connections but answers nothing (stopped, or overloaded) is tried again.
const apiServerTimeout = 5 * time.Second

// waitForAPIServer waits until the API server answers, logging every try
// that fails (transient.Retry): an operator started during an outage (an
// upgrade of the control plane) goes on when it ends instead of
// crash-looping. It then fails fast, with one line, when the Lease's
// namespace is missing.
func waitForAPIServer(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = apiServerTimeout
	client, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return fmt.Errorf("cannot build a client for %s: %v", cfg.Host, err)
	}
	err = transient.Retry(ctx, log, "waiting for the Kubernetes API server at "+cfg.Host, func(context.Context) error {
		_, err := client.Discovery().ServerVersion()
		return err
	})
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the Kubernetes API server at %s refused the operator's credentials (Unauthorized): check the kubeconfig, or the service account's token", cfg.Host)
	case err != nil:
		return fmt.Errorf("cannot use the Kubernetes API server at %s: %v", cfg.Host, err)
	}
	if !o.LeaderElect {
		return nil
	}
	err = transient.Retry(ctx, log, "reading the namespace of the Lease", func(ctx context.Context) error {
		_, err := client.CoreV1().Namespaces().Get(ctx, o.OperatorNamespace, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("namespace %q (--operator-namespace) does not exist: create it, or name the namespace the operator runs in", o.OperatorNamespace)
	case apierrors.IsForbidden(err):
		return nil // allowed to hold a Lease there without reading the namespace
	case err != nil:
		return fmt.Errorf("cannot read namespace %q (--operator-namespace): %v", o.OperatorNamespace, err)
	}
	return nil
}

// leaseTimingsFor returns the Lease timings for the cluster's control plane.
func leaseTimingsFor(ctx context.Context, c client.Client, o Options, log logr.Logger) (LeaseTimings, error) {
	if !o.LeaderElect {
		return LeaseTimings{}, nil
	}
	var single bool
	err := transient.Retry(ctx, log, "counting the control-plane nodes", func(ctx context.Context) (err error) {
		single, err = singleControlPlane(ctx, c)
		return err
	})
	if err != nil {
		return LeaseTimings{}, err
	}
	return leaseTimings(o, single)
}

// newManager makes the manager; the leader Lease's Events are sent until
// events ends.
func newManager(events context.Context, cfg *rest.Config, o Options, scheme *runtime.Scheme, t LeaseTimings, identity string, serving *tlsprofile.Serving) (manager.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(transient.RetryEventWrites)
	shutdown := 30 * time.Second
	metrics, err := metricsOptions(o, serving)
	if err != nil {
		return nil, err
	}
	mo := manager.Options{
		Scheme:                  scheme,
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.HealthAddress,
		PprofBindAddress:        o.PprofAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        LeaseName,
		LeaderElectionNamespace: o.OperatorNamespace,
		// A replica that stops on SIGTERM hands the Lease over at once rather than
		// making its successor wait out the lease duration.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &t.LeaseDuration,
		RenewDeadline:                 &t.RenewDeadline,
		RetryPeriod:                   &t.RetryPeriod,
		GracefulShutdownTimeout:       &shutdown,
	}
	if o.LeaderElect {
		lock, err := newLeaderLock(events, cfg, o.OperatorNamespace, identity, t)
		if err != nil {
			return nil, err
		}
		mo.LeaderElectionResourceLockInterface = lock
	}
	if err := ConfigureManager(&mo, o.Modules); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the operator: %v", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr)); err != nil {
		return nil, err
	}
	released := func(returned uint64) {
		mgr.GetLogger().V(1).Info("returned the memory of finished work to the system", "bytes", returned)
	}
	if err := mgr.Add(IdleRelease{Released: released}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// ConfigureManager has each module add what it needs to the manager's options.
func ConfigureManager(mo *manager.Options, modules []Module) error {
	for _, m := range modules {
		if err := m.ConfigureManager(mo); err != nil {
			return err
		}
	}
	return nil
}

// informersSynced is ready once the manager's caches have filled, so that a
// replica reports ready only when it can act on what it watches.
func informersSynced(mgr manager.Manager) healthz.Checker {
	return func(_ *http.Request) error {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches have not synced")
		}
		return nil
	}
}
