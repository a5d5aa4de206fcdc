package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// PodsMissing tells whether one of the module's DaemonSets lacks its pod on
// some node. Only then can a refusal count (refusedCreate), so only then
// does observe read the DaemonSet controller's Events (Snapshot.PodCreations):
// a settled cluster's reconciles do without.
func PodsMissing(s *Snapshot) bool {
	for key, o := range s.Owned {
		if key.GroupKind == objects.DaemonSet.GroupKind() && status.RolloutOf(o, "").Missing > 0 {
			return true
		}
	}
	return false
}

// refusedCreate is what refused the last pod a DaemonSet's controller tried
// to create, when some of its nodes have no pod and none was created since:
// "" otherwise. Events tell time to the second, so a refusal in the second of
// a creation counts, as long as pods are missing.
func refusedCreate(creations []PodCreation, daemonSet types.UID, missing int64) string {
	if missing == 0 {
		return ""
	}
	var failed, created *PodCreation
	for i := range creations {
		c := &creations[i]
		switch {
		case c.DaemonSet != daemonSet:
		case c.Failed && (failed == nil || !c.At.Before(failed.At)):
			failed = c
		case !c.Failed && (created == nil || c.At.After(created.At)):
			created = c
		}
	}
	if failed == nil || created != nil && created.At.After(failed.At) {
		return ""
	}
	// The DaemonSet controller's note is "Error creating: " and the API
	// server's answer.
	return strings.TrimPrefix(failed.Message, "Error creating: ")
}

// refusedMessage says which workloads cannot create their pods, with the API
// server's answer, and what to do; "" when none.
func refusedMessage(rollouts []status.Rollout, namespace string) string {
	var parts []string
	for _, r := range rollouts {
		if r.Refused != "" {
			parts = append(parts, fmt.Sprintf("the %s %s cannot create its pods: %s", r.Kind, r.Name, strings.TrimSuffix(r.Refused, ".")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("The API server refuses MetalLB's pods: %s. Fix what refuses them (an admission webhook or policy, Pod Security, a ResourceQuota in %s, or on OpenShift "+
		"a SecurityContextConstraints grant): their controllers retry on their own. Their Events: kubectl get events -n %s "+
		"--field-selector reason=FailedCreate", strings.Join(parts, "; "), namespace, namespace)
}
