// Package status works out an operand's state, with no client and no clock:
// its rollouts, the rollout tracking kept across restarts, its conditions
// (Available, Progressing, Degraded, Upgradeable) and what its ClusterOperator
// shows. pkg/status/publish writes it.
package status
