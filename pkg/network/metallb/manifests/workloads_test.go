package manifests

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// On OpenShift, MetalLB's namespace allows management workloads, keeps its
// Pod Security levels from OpenShift's label syncer and opts out of a
// cluster-wide default node selector, and every pod the
// operator renders asks for the platform's CPUs, so that workload
// partitioning (single-node OpenShift) schedules them there; elsewhere none
// of it is rendered.
func TestManagementWorkloadsOnOpenShift(t *testing.T) {
	for _, name := range []string{"openshift-frr-k8s", "monitoring-openshift", "frr-k8s", "defaults"} {
		sc := scenarios[slices.IndexFunc(scenarios, func(sc scenario) bool { return sc.name == name })]
		pods := 0
		for _, o := range sc.render(t) {
			if o.GetKind() == "Namespace" {
				allowed := o.GetAnnotations()["workload.openshift.io/allowed"] == "management"
				unsynced := o.GetLabels()["security.openshift.io/scc.podSecurityLabelSync"] == "false"
				selector, noDefaultSelector := o.GetAnnotations()["openshift.io/node-selector"]
				noDefaultSelector = noDefaultSelector && selector == ""
				if allowed != sc.openshift || unsynced != sc.openshift || noDefaultSelector != sc.openshift {
					t.Errorf("%s: namespace allows management workloads %t, unsynced labels %t, no default node selector %t; want all %t",
						name, allowed, unsynced, noDefaultSelector, sc.openshift)
				}
			}
			annotations, found, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
			if !found {
				continue
			}
			pods++
			if got := annotations[managementWorkloadKey] == managementWorkloadValue; got != sc.openshift {
				t.Errorf("%s: %s %s has the management workload annotation %t, want %t", name, o.GetKind(), o.GetName(), got, sc.openshift)
			}
		}
		if pods == 0 {
			t.Errorf("%s: no pod template rendered", name)
		}
	}
}

// The speakers count as available only once ready for frr-k8s's
// minReadySeconds while they move onto frr-k8s, and at once otherwise.
func TestSpeakersPacedOnlyWhileMovingOntoFRRK8s(t *testing.T) {
	for _, moving := range []bool{false, true} {
		s, err := SettingsFor(Environment{Namespace: DefaultNamespace}, &v1beta1.MetalLB{Spec: frrK8s()})
		if err != nil {
			t.Fatal(err)
		}
		s.SpeakersMoveOntoFRRK8s = moving
		objs, err := Render(s, "")
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]int64{true: frrK8sMinReadySeconds}[moving]
		i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "DaemonSet" && o.GetName() == SpeakerName
		})
		if got, _, _ := unstructured.NestedInt64(objs[i].Object, "spec", "minReadySeconds"); got != want {
			t.Errorf("moving onto frr-k8s %t: the speakers' minReadySeconds is %d, want %d", moving, got, want)
		}
	}
}
