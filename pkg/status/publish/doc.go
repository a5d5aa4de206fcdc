// Package publish writes an operand's state where users look: its
// ClusterOperator (OpenShift's cluster-version operator reads it) and the
// operator's metrics. The state itself is worked out by pkg/status, with no
// client.
package publish
