package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Rollout is how far one workload is in running its current pod template.
type Rollout struct {
	Kind, Namespace, Name string
	// Version is the release the workload was last written for (an annotation).
	Version string
	// Desired, Updated and Available count pods: replicas of a Deployment,
	// nodes of a DaemonSet.
	Desired, Updated, Available int64
	// Old counts a Deployment's pods of earlier templates: while it surges, an
	// old pod may be the available one.
	Old int64
	// Observed tells whether the workload's controller has seen its current spec.
	Observed bool
	// Absent tells that the workload is to run but does not exist yet.
	Absent bool
	// Missing counts a DaemonSet's nodes that should run its pod and have none.
	Missing int64
	// Refused is the API server's answer to the controller's last attempt to
	// create a pod, when that was refused and no pod was created since; "" if
	// not. A Deployment's ReplicaSet reports it in a condition; a DaemonSet's
	// controller only in Events, which the plan reads.
	Refused string
}

// AbsentRollout is the rollout of a workload that is to run but does not
// exist yet: it is not done.
func AbsentRollout(kind, namespace, name string) Rollout {
	return Rollout{Kind: kind, Namespace: namespace, Name: name, Absent: true}
}

// RolloutOf reads the rollout of a Deployment or a DaemonSet.
func RolloutOf(o *unstructured.Unstructured, versionAnnotation string) Rollout {
	r := Rollout{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Version: o.GetAnnotations()[versionAnnotation]}
	generation, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	r.Observed = generation >= o.GetGeneration()
	count := func(field string) int64 {
		n, _, _ := unstructured.NestedInt64(o.Object, "status", field)
		return n
	}
	switch r.Kind {
	case objects.DaemonSet.Kind:
		r.Desired, r.Updated, r.Available = count("desiredNumberScheduled"), count("updatedNumberScheduled"), count("numberAvailable")
		r.Missing = max(r.Desired-count("currentNumberScheduled"), 0)
	default:
		replicas, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		r.Desired, r.Updated, r.Available = replicas, count("updatedReplicas"), count("availableReplicas")
		r.Old = max(count("replicas")-r.Updated, 0)
		r.Refused = replicaFailure(o)
	}
	return r
}

// replicaFailure is the message of a Deployment's ReplicaFailure condition,
// which its controller copies from the ReplicaSet that cannot create a pod
// and removes once one is created; "" when there is none.
func replicaFailure(o *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		if c["type"] == string(appsv1.DeploymentReplicaFailure) && c["status"] == "True" {
			message, _ := c["message"].(string)
			return message
		}
	}
	return ""
}

// Done tells whether every pod runs the current template and is available,
// and no pod of an earlier one is left.
func (r Rollout) Done() bool {
	return r.Observed && r.Updated >= r.Desired && r.Available >= r.Desired && r.Old == 0
}

// Unavailable counts the pods that should be available and are not.
func (r Rollout) Unavailable() int64 { return max(r.Desired-r.Available, 0) }

// Message says how far the rollout is: "speaker: 12 of 50 nodes updated".
func (r Rollout) Message() string {
	unit := "replicas"
	if r.Kind == objects.DaemonSet.Kind {
		unit = "nodes"
	}
	if r.Absent {
		return fmt.Sprintf("%s: the %s is being created", r.Name, r.Kind)
	}
	if !r.Observed {
		return fmt.Sprintf("%s: the %s controller has not seen the new spec yet", r.Name, r.Kind)
	}
	msg := fmt.Sprintf("%s: %d of %d %s updated", r.Name, r.Updated, r.Desired, unit)
	if r.Unavailable() > 0 {
		msg += fmt.Sprintf(", %d unavailable", r.Unavailable())
	}
	if r.Old > 0 {
		msg += fmt.Sprintf(", %d old still running", r.Old)
	}
	return msg
}
