package operator

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Options are the settings of `cluster-network-operator start`.
type Options struct {
	Kubeconfig        string
	Namespace         string // where MetalLB runs
	OperatorNamespace string // where the operator runs and holds its leader Lease
	MetricsAddress    string
	HealthAddress     string
	PprofAddress      string
	LeaderElect       bool
	// LeaseDuration, RenewDeadline and RetryPeriod override the leader Lease's
	// timings (see leaseTimings) where not zero.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	LogLevel                                  string
	LogFormat                                 string
	// Platform overrides the detected platform; AllowedPlatforms are those
	// MetalLB is deployed on.
	Platform         string
	AllowedPlatforms []string
	// MetalLBWebhooks has MetalLB's controller serve its validating webhooks.
	MetalLBWebhooks bool
	// RolloutHungAfter is how long a rollout may make no progress before it is
	// reported hung.
	RolloutHungAfter time.Duration
	// ClusterOperator names the ClusterOperator status is written to.
	ClusterOperator string
}

// DefaultOptions are the defaults of the flags.
func DefaultOptions() Options {
	return Options{
		Namespace:         metallb.DefaultNamespace,
		OperatorNamespace: "cluster-network-operator",
		MetricsAddress:    ":8443",
		HealthAddress:     ":8081",
		PprofAddress:      "0",
		LeaderElect:       true,
		LogLevel:          "info",
		LogFormat:         "json",
		AllowedPlatforms:  metallb.DefaultAllowedPlatforms,
		MetalLBWebhooks:   true,
		RolloutHungAfter:  10 * time.Minute,
		ClusterOperator:   "metallb",
	}
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to a kubeconfig; empty means $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace MetalLB runs in")
	fs.StringVar(&o.OperatorNamespace, "operator-namespace", o.OperatorNamespace, "namespace the operator runs in; it holds the leader Lease")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, `address of the Prometheus metrics endpoint, served over HTTPS to a bearer token allowed get on the non-resource URL /metrics ("0" disables it)`)
	fs.StringVar(&o.HealthAddress, "health-probe-bind-address", o.HealthAddress, `address of the /healthz and /readyz endpoints ("0" disables them)`)
	fs.StringVar(&o.PprofAddress, "pprof-bind-address", o.PprofAddress, `address of Go's /debug/pprof profiles, plain HTTP with no authentication: bind it to loopback ("0", the default, disables it)`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run only while holding the leader Lease, so that one replica acts at a time")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "how long a standby waits before taking over the Lease of a leader that stopped renewing it; 0 means OpenShift's 137s, or 270s with one control-plane node")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "how long the leader keeps trying to renew its Lease (through an API server outage) before it stops; 0 means 107s, or 240s with one control-plane node")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "how often the leader renews the Lease, and a standby tries to take it; 0 means 26s, or 60s with one control-plane node")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "debug, info, warn or error")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "json or console")
	fs.StringVar(&o.Platform, "platform", o.Platform, `the platform, such as "BareMetal", instead of detecting it (from the Infrastructure object on OpenShift, else from the Nodes' provider IDs)`)
	fs.StringSliceVar(&o.AllowedPlatforms, "allowed-platforms", o.AllowedPlatforms, "the platforms MetalLB is deployed on")
	fs.DurationVar(&o.RolloutHungAfter, "rollout-hung-timeout", o.RolloutHungAfter, "how long a rollout may make no progress before Degraded says RolloutHung")
	fs.StringVar(&o.ClusterOperator, "cluster-operator-name", o.ClusterOperator, "the ClusterOperator the status is written to, where that API exists (OpenShift)")
	fs.BoolVar(&o.MetalLBWebhooks, "metallb-webhooks", o.MetalLBWebhooks, "have MetalLB's controller serve its validating webhooks; without them only the CRDs' schemas check MetalLB's objects")
}

// Validate reports the first invalid option, naming its flag.
func (o *Options) Validate() error {
	for flag, ns := range map[string]string{"--namespace": o.Namespace, "--operator-namespace": o.OperatorNamespace} {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("%s %q is not a valid namespace name: %s", flag, ns, errs[0])
		}
	}
	for flag, addr := range map[string]string{"--metrics-bind-address": o.MetricsAddress, "--health-probe-bind-address": o.HealthAddress} {
		if addr == "0" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("%s %q is not host:port or \"0\": %v", flag, addr, err)
		}
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
	if o.RolloutHungAfter <= 0 {
		return fmt.Errorf("--rollout-hung-timeout %s must be positive", o.RolloutHungAfter)
	}
	if len(o.AllowedPlatforms) == 0 {
		return fmt.Errorf("--allowed-platforms is empty: MetalLB would never be deployed")
	}
	if o.LogFormat != "json" && o.LogFormat != "console" {
		return fmt.Errorf("--log-format %q is not one of json, console", o.LogFormat)
	}
	return nil
}
