package plan

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// ReasonManagedElsewhere says that another operator manages MetalLB.
const ReasonManagedElsewhere = "ManagedElsewhere"

// olmLabelPrefix starts the label OLM puts on what it installs for an
// operator: operators.coreos.com/<package>.<namespace>.
const olmLabelPrefix = "operators.coreos.com/"

// metallbCRD returns the foreign CRD of the MetalLB object, if any: the mark
// of another MetalLB operator (upstream's metallb-operator ships one), which
// would lose its own fields were this operator's schema applied over it.
func metallbCRD(foreign []objects.Foreign) *objects.Foreign {
	i := slices.IndexFunc(foreign, func(f objects.Foreign) bool {
		return f.Object.GetKind() == objects.CustomResourceDefinition.Kind && f.Object.GetName() == manifests.MetalLBCRD
	})
	if i < 0 {
		return nil
	}
	return &foreign[i]
}

// managerOf names what manages a foreign object, from what its metadata
// says: OLM's label, its owners, its field managers.
func managerOf(f objects.Foreign) string {
	var who []string
	for key := range f.Live.Labels {
		if rest, ok := strings.CutPrefix(key, olmLabelPrefix); ok {
			who = append(who, "OLM's "+rest)
		}
	}
	slices.Sort(who)
	for _, o := range f.Live.OwnerReferences {
		who = append(who, o.Kind+" "+o.Name)
	}
	var managers []string
	for _, m := range f.Managers() {
		if m != manifests.FieldOwner {
			managers = append(managers, m)
		}
	}
	if len(managers) > 0 {
		who = append(who, "written by "+strings.Join(managers, ", "))
	}
	return joinOr(who, "an unknown manager")
}

func managedElsewhereMessage(crd objects.Foreign, by, namespace string) string {
	return fmt.Sprintf("Another operator manages MetalLB: %s is not this operator's (%s). This operator deploys nothing and "+
		"writes no MetalLB object. To hand MetalLB over to this operator, uninstall the other one, keeping its CRDs, then: "+
		"kubectl annotate namespace %s %s=true", objects.Describe(crd.Object), by, namespace, manifests.AdoptAnnotation)
}

// managedElsewhereNotice says once, on the foreign CRD, that the operator
// stands down.
func managedElsewhereNotice(crd objects.Foreign, by, namespace string) Event {
	return Event{Regarding: crd.Live, Type: corev1.EventTypeNormal, Reason: ReasonManagedElsewhere, Action: "Reconcile",
		Note: managedElsewhereMessage(crd, by, namespace)}
}

// adoptionNotices tell each object taken over whom it was taken from.
func adoptionNotices(foreign []objects.Foreign) []Event {
	events := make([]Event, len(foreign))
	for i, f := range foreign {
		events[i] = Event{Regarding: f.Live, Type: corev1.EventTypeNormal, Reason: "Adopted", Action: "Adopt",
			Note: fmt.Sprintf("Taken over from another installation (%s), as the namespace's %s annotation allows; its owner references, if any, were removed.",
				managerOf(f), manifests.AdoptAnnotation)}
	}
	return events
}
