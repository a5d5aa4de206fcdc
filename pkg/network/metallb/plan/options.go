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
	// reported hung. Progress within a step of the rollout (status.Track) is
	// recorded half as often, so that the hung timer, which counts from the
	// last progress recorded, runs late by HungAfter/2 at most and never
	// counts a rollout that still moves as hung.
	HungAfter time.Duration
	// ClusterOperator names the ClusterOperator the status is written to, when
	// that API exists.
	ClusterOperator string
}

// progressRefresh is how long after the last record a rollout's progress
// within one step is recorded (HungAfter).
func (o Options) progressRefresh() time.Duration { return o.HungAfter / 2 }
