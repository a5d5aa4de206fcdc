package operator

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	cliflag "k8s.io/component-base/cli/flag"
)

// Options are the settings of `cluster-network-operator start`: the
// operator's own, and the modules it runs, with theirs.
type Options struct {
	Modules           []Module
	Kubeconfig        string
	OperatorNamespace string // where the operator runs and holds its leader Lease
	MetricsAddress    string
	// MetricsSecure, when given, says whether the metrics are served over
	// HTTPS to an authorized token (true) or over plain HTTP to anyone, on a
	// loopback address only (false); unset, see metricsOverHTTPS.
	MetricsSecure cliflag.Tristate
	// MetricsCertDir holds the metrics endpoint's certificate, when set
	// (servingcert.go).
	MetricsCertDir string
	HealthAddress  string
	PprofAddress   string
	LeaderElect    bool
	// LeaseDuration, RenewDeadline and RetryPeriod override the leader Lease's
	// timings (see leaseTimings) where not zero.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	LogLevel                                  string
	LogFormat                                 string
	// ClusterOperator names the ClusterOperator a module's status is written
	// to; empty is the module's name.
	ClusterOperator string
}

// DefaultOptions are the defaults of the flags, for the modules given.
func DefaultOptions(modules ...Module) Options {
	return Options{
		Modules:           modules,
		OperatorNamespace: "cluster-network-operator",
		MetricsAddress:    ":8443",
		HealthAddress:     ":8081",
		PprofAddress:      "0",
		LeaderElect:       true,
		LogLevel:          "info",
		LogFormat:         "json",
	}
}

// AddFlags binds the options, and the modules', to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to a kubeconfig; empty means $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&o.OperatorNamespace, "operator-namespace", o.OperatorNamespace, "namespace the operator runs in; it holds the leader Lease")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, `address of the Prometheus metrics endpoint, served over HTTPS to a bearer token allowed get on the non-resource URL /metrics, or over plain HTTP on a loopback address (see --metrics-secure; "0" disables it)`)
	fs.Var(&o.MetricsSecure, "metrics-secure", "serve the metrics over HTTPS to an authorized bearer token; false serves them over plain HTTP to anyone, and is accepted only with a loopback --metrics-bind-address. Unset: HTTPS, but plain HTTP on a loopback address, which only this host (or pod) reaches, as a kube-rbac-proxy beside the operator or a measurement on one machine would")
	fs.Lookup("metrics-secure").NoOptDefVal = "true"
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "directory of the metrics endpoint's certificate (tls.crt, tls.key), served once its files exist and read again when they change; until then, and when empty, a self-signed one")
	fs.StringVar(&o.HealthAddress, "health-probe-bind-address", o.HealthAddress, `address of the /healthz and /readyz endpoints ("0" disables them)`)
	fs.StringVar(&o.PprofAddress, "pprof-bind-address", o.PprofAddress, `address of Go's /debug/pprof profiles, plain HTTP with no authentication: bind it to loopback ("0", the default, disables it)`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run only while holding the leader Lease, so that one replica acts at a time")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "how long a standby waits before taking over the Lease of a leader that stopped renewing it; 0 means OpenShift's 137s, or 270s with one control-plane node")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "how long the leader keeps trying to renew its Lease (through an API server outage) before it stops; 0 means 107s, or 240s with one control-plane node")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "how often the leader renews the Lease, and a standby tries to take it; 0 means 26s, or 60s with one control-plane node")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "debug, info, warn or error")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "json or console")
	fs.StringVar(&o.ClusterOperator, "cluster-operator-name", o.ClusterOperator, "the ClusterOperator the status is written to, where that API exists (OpenShift); empty is the operand's name")
	for _, m := range o.Modules {
		if c, ok := m.(Configurable); ok {
			c.AddFlags(fs)
		}
	}
}

// Validate reports the first invalid option, naming its flag, and completes
// the modules' settings: it is called once, before Run.
func (o *Options) Validate() error {
	if errs := validation.IsDNS1123Label(o.OperatorNamespace); len(errs) > 0 {
		return fmt.Errorf("--operator-namespace %q is not a valid namespace name: %s", o.OperatorNamespace, errs[0])
	}
	for flag, addr := range map[string]string{"--metrics-bind-address": o.MetricsAddress, "--health-probe-bind-address": o.HealthAddress} {
		if addr == "0" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("%s %q is not host:port or \"0\": %v", flag, addr, err)
		}
	}
	if err := o.validateMetricsSecure(); err != nil {
		return err
	}
	for flag, d := range map[string]time.Duration{"--leader-election-lease-duration": o.LeaseDuration,
		"--leader-election-renew-deadline": o.RenewDeadline, "--leader-election-retry-period": o.RetryPeriod} {
		if d < 0 {
			return fmt.Errorf("%s %s is negative: use 0 for the default", flag, d)
		}
	}
	if _, ok := logLevels[o.LogLevel]; !ok {
		return fmt.Errorf("--log-level %q is not one of debug, info, warn, error", o.LogLevel)
	}
	if o.LogFormat != "json" && o.LogFormat != "console" {
		return fmt.Errorf("--log-format %q is not one of json, console", o.LogFormat)
	}
	for _, m := range o.Modules {
		if c, ok := m.(Configurable); ok {
			if err := c.Complete(); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateMetricsSecure refuses plain-HTTP metrics anywhere but on loopback:
// without authentication, no other host may reach them.
func (o *Options) validateMetricsSecure() error {
	if o.metricsOverHTTPS() || o.MetricsAddress == "0" || isLoopback(o.MetricsAddress) {
		return nil
	}
	return fmt.Errorf("--metrics-secure=false serves the metrics to anyone: --metrics-bind-address %q must be a loopback address such as 127.0.0.1:8443", o.MetricsAddress)
}

// metricsOverHTTPS is --metrics-secure where it is given. Unset, the metrics
// are served over HTTPS, but over plain HTTP on a loopback address: only this
// host's (or pod's) programs reach it, as OpenShift's operators serve a
// kube-rbac-proxy beside them, and a measurement on one machine reads the heap
// there as it reads other operators'.
func (o *Options) metricsOverHTTPS() bool {
	if o.MetricsSecure.Provided() {
		return o.MetricsSecure.Value()
	}
	return !isLoopback(o.MetricsAddress)
}

// isLoopback: address is host:port with a loopback IP for host.
func isLoopback(address string) bool {
	host, _, _ := net.SplitHostPort(address)
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
