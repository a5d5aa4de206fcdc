package status

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types an operand reports.
const (
	Available   = "Available"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Upgradeable = "Upgradeable"
)

// ReasonAsExpected is the reason of a condition that is as it should be.
const ReasonAsExpected = "AsExpected"

// Condition is one condition as the operator works it out.
type Condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string // CamelCase
	Message string // says what to do, where there is something to do
}

// Conditions are an operand's four conditions, in the order they are shown.
type Conditions [4]Condition

// NewConditions returns the conditions of an operand that is well: available,
// not progressing, not degraded, upgradeable.
func NewConditions() Conditions {
	return Conditions{
		{Type: Available, Status: metav1.ConditionTrue, Reason: ReasonAsExpected},
		{Type: Progressing, Status: metav1.ConditionFalse, Reason: ReasonAsExpected, Message: "No rollout is in progress."},
		{Type: Degraded, Status: metav1.ConditionFalse, Reason: ReasonAsExpected},
		{Type: Upgradeable, Status: metav1.ConditionTrue, Reason: ReasonAsExpected, Message: "Nothing holds back an upgrade."},
	}
}

// Set changes one condition.
func (cs *Conditions) Set(conditionType string, status metav1.ConditionStatus, reason, message string) {
	for i := range cs {
		if cs[i].Type == conditionType {
			cs[i] = Condition{Type: conditionType, Status: status, Reason: reason, Message: message}
			return
		}
	}
	panic("unknown condition type " + conditionType)
}

// Get returns one condition.
func (cs Conditions) Get(conditionType string) Condition {
	for _, c := range cs {
		if c.Type == conditionType {
			return c
		}
	}
	panic("unknown condition type " + conditionType)
}

// ApplyTo records the conditions in an object's status. A transition time
// changes, to now, only when a condition's status does.
func (cs Conditions) ApplyTo(list *[]metav1.Condition, generation int64, now time.Time) {
	for _, c := range cs {
		meta.SetStatusCondition(list, metav1.Condition{
			Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
}

// Bad tells whether the condition is one to look into: Available or
// Upgradeable False, Degraded True.
func (c Condition) Bad() bool {
	if c.Type == Degraded {
		return c.Status == metav1.ConditionTrue
	}
	return c.Type != Progressing && c.Status == metav1.ConditionFalse
}

// OperandStatus is what a ClusterOperator shows of an operand.
type OperandStatus struct {
	Conditions Conditions
	// Versions are the versions every part of the operand runs.
	Versions       []configv1.OperandVersion
	RelatedObjects []configv1.ObjectReference
}
