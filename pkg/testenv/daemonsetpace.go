package testenv

// PrematureSyncs bounds how far the DaemonSet controller runs ahead of
// maxUnavailable. It acts on its informer cache, guarded by expectations that
// count deletions without naming the pods, and it counts a deletion observed
// on every update of a terminating pod as well as on its removal
// (kubernetes/kubernetes#77773): the late removals of one batch can so
// satisfy the expectation of the next before its cache shows that batch
// terminating, and a sync that runs then counts those pods as available and
// deletes up to maxUnavailable more. Each such premature sync takes down at
// most one more batch; it takes an informer that lags, as on this 2-core
// machine running two packages' control planes at once, and two nodes more
// than maxUnavailable were the most seen (7 down at maxUnavailable 5). The
// strict bound holds where the control plane is light: see
// TestDaemonSetRollingUpdateOnKwokNodes. What the operator writes (the
// DaemonSet's maxUnavailable) its tests assert strictly.
const PrematureSyncs = 2

// PaceBound is the most nodes a DaemonSet rollout with maxUnavailable may
// leave without a ready pod at once on these control planes (PrematureSyncs).
func PaceBound(maxUnavailable int) int { return maxUnavailable * (1 + PrematureSyncs) }
