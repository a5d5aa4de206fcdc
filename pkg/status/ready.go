package status

import (
	corev1 "k8s.io/api/core/v1"
)

// PodReady tells whether a pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	c := PodReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// PodReadyCondition returns a pod's Ready condition, or nil.
func PodReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	return find(p.Status.Conditions, corev1.PodReady, func(c corev1.PodCondition) corev1.PodConditionType { return c.Type })
}

// NodeReadyCondition returns a node's Ready condition, or nil.
func NodeReadyCondition(n *corev1.Node) *corev1.NodeCondition {
	return find(n.Status.Conditions, corev1.NodeReady, func(c corev1.NodeCondition) corev1.NodeConditionType { return c.Type })
}

// NodeReady tells whether a node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	c := NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

// find returns the condition of a type in a list, or nil: Kubernetes gives
// each kind a condition type of its own, and client-go no helper to look one up.
func find[C any, T comparable](conditions []C, t T, typeOf func(C) T) *C {
	for i := range conditions {
		if typeOf(conditions[i]) == t {
			return &conditions[i]
		}
	}
	return nil
}
