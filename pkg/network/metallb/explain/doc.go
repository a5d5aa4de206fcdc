// Package explain is what `kubectl metallb` tells, with no client: for one
// Service, where MetalLB announces its address or, when it has none or
// nobody answers for it, why, in one sentence with the fix (Service); for
// the whole installation, the operator, MetalLB, its pools, advertisements,
// peers, speakers and findings (Status). Both read a Cluster: what the
// plugin could read, and what it could not.
package explain
