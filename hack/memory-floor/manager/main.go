// Command manager is the floor of the operator's stack: a controller-runtime
// manager with leader election, and nothing of the operator's.
package main

import "github.com/bmlb/cluster-network-operator/hack/memory-floor/floor"

func main() { floor.Main(nil) }
