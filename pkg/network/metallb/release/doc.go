// Package release names the upstream releases the operator follows, as the
// Go modules pinned under hack/tools have them: `make generate` writes them
// (hack/release-versions), and `make verify` fails when they are stale. A new
// MetalLB release is a change of those pins, and nothing else in Go.
package release
