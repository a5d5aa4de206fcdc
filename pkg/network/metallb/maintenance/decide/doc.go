// Package decide is what node maintenance decides, with no client: which
// nodes are being taken down (Signals), which of them leave MetalLB's
// announcements (labelled corev1.LabelNodeExcludeBalancers, which the
// speakers honour) and which come back, and which are held announcing
// because they are the last that could carry an advertisement's addresses.
package decide
