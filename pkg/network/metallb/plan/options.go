package plan

import (
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// Options are the module's settings from the operator's flags and environment.
type Options struct {
	manifests.Environment
	// Platform overrides the detected platform when set.
	Platform string
	// AllowedPlatforms are the platforms MetalLB is deployed on.
	AllowedPlatforms []string
	// HungAfter is how long a rollout may make no progress before it is
	// reported hung.
	HungAfter time.Duration
	// ClusterOperator names the ClusterOperator the status is written to, when
	// that API exists.
	ClusterOperator string
}
