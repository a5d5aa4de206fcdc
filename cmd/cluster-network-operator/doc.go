// Command cluster-network-operator runs the operator that makes MetalLB a
// built-in of bare-metal clusters.
package main
