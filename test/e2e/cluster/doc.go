// Package cluster starts the cluster the MetalLB stories and the demo
// (hack/demo) run on: a control plane from pkg/testenv whose kwok nodes have
// network namespaces on a test bridge, where the node runner
// (test/e2e/noderunner) runs the real MetalLB, frr-k8s and kube-proxy
// binaries for the pods the operator makes. It also holds what the node
// runner needs to know of MetalLB's releases: which binary runs for which
// image, and the images the operator is started with for a release.
package cluster
