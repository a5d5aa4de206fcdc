// Command kubectl-metallb is the kubectl plugin of the operator's MetalLB:
// `kubectl metallb status` tells the operator, MetalLB, its pools,
// advertisements, peers, speakers and what is wrong in the configuration;
// `kubectl metallb explain service/NAME` tells where a Service's address is
// announced or why it is not, with the fix. It reads only what the standard
// view role may read, and says what it could not.
package main
