// Package status works out and reports an operand's state: its rollouts, its
// conditions (Available, Progressing, Degraded, Upgradeable) and the versions
// it runs, on a ClusterOperator, on the operand's own object, as Events and as
// metrics.
package status
