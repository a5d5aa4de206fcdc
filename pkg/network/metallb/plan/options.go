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
	// ProgressEvery is how often, at most, a rollout's progress is recorded,
	// and shown in Progressing, while its counts keep changing; 0 records
	// every change. The start and the end of a rollout, and every other
	// condition, are written at once; the hung timer, which counts from the
	// last progress recorded, runs late by this much at most.
	ProgressEvery time.Duration
	// ClusterOperator names the ClusterOperator the status is written to, when
	// that API exists.
	ClusterOperator string
}
