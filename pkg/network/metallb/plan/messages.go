package plan

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

func platformMessage(p Platform, allowed []string) string {
	return fmt.Sprintf("MetalLB is not deployed: the platform is %s (from %s), and the operator deploys MetalLB only on %s. "+
		"To deploy it anyway, start the operator with --platform=BareMetal.", p.Type, p.Source, strings.Join(allowed, ", "))
}

// foreignMessage tells what another installation owns, and how to hand it
// over, once the blockers' own messages are acted on.
func foreignMessage(foreign []objects.Foreign, blockers []problem, namespace string) string {
	names := make([]string, len(foreign))
	for i, f := range foreign {
		names[i] = fmt.Sprintf("%s (written by %s)", objects.Describe(f.Object), joinOr(f.Managers(), "an unknown manager"))
	}
	handOver := "hand MetalLB over to this operator, which then takes those objects over in place (the addresses and the memberlist " +
		"key are kept; MetalLB's pods restart once, the speakers one at a time)"
	if len(blockers) > 0 {
		reasons := make([]string, len(blockers))
		for i, b := range blockers {
			reasons[i] = b.reason
		}
		handOver = fmt.Sprintf("hand MetalLB over to this operator once what stops a takeover is resolved (%s: see those Events)",
			strings.Join(slices.Compact(reasons), ", "))
	}
	return fmt.Sprintf("Another installation of MetalLB owns objects this operator would write: %s. Nothing was changed. "+
		"Remove that installation, or %s: kubectl annotate namespace %s %s=true", strings.Join(names, "; "), handOver, namespace, manifests.AdoptAnnotation)
}

func ignoredMessage(o *metav1.PartialObjectMetadata, namespace string) string {
	return fmt.Sprintf("%s %s/%s is outside %s and is ignored", o.Kind, o.Namespace, o.Name, namespace)
}
