package publish

// Reporter publishes one operand's state: its conditions and rollouts as
// metrics labelled with its name, and its ClusterOperator. The operator gives
// each module one.
type Reporter struct {
	Operand string
	// ClusterOperator writes the operand's ClusterOperator; nil where that API
	// does not exist.
	ClusterOperator *ClusterOperator
}
