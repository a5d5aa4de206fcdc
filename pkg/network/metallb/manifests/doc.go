// Package manifests is what MetalLB looks like for a given spec, with no
// client: the settings a MetalLB object and the operator's environment give
// (checked as the API server checks the object, and for what no schema can
// say), the images, the speakers' memberlist file, the names MetalLB's own
// manifests use, and the objects rendered from bindata/metallb.
package manifests
