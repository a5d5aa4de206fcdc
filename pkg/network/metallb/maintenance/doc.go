// Package maintenance moves MetalLB's announcements off a node that is being
// taken down for maintenance, and back once it has returned: it labels the
// node corev1.LabelNodeExcludeBalancers, which MetalLB's speakers honour by
// withdrawing gracefully, and marks it (decide.MarkAnnotation) so that it
// takes off only what it put. What to do is decided in package decide; the
// MetalLB module's plan says what the signals are (SetScope).
package maintenance
