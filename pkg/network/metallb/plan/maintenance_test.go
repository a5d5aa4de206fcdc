package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	maintenance "github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

func objectOf(kind, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: kind}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// The scope's advertisements select the nodes their selectors do, and a
// BGPAdvertisement's also those of the peers it names (all, when it names
// none); a selector MetalLB refuses selects nothing.
func TestMaintenanceScope(t *testing.T) {
	rack := func(v string) []metav1.LabelSelector {
		return []metav1.LabelSelector{{MatchLabels: map[string]string{"rack": v}}}
	}
	s := &Snapshot{
		MetalLB: &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{Maintenance: &v1beta1.Maintenance{NodeLabels: []string{"m"}}}},
		Advertisements: []Advertisement{
			{Object: objectOf(manifests.L2AdvertisementKind.Kind, "l2"), NodeSelectors: rack("1")},
			{Object: objectOf(manifests.BGPAdvertisementKind.Kind, "to-a"), Peers: []string{"a"}},
			{Object: objectOf(manifests.BGPAdvertisementKind.Kind, "to-all")},
			{Object: objectOf(manifests.L2AdvertisementKind.Kind, "refused"),
				NodeSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bad"}}}}},
		},
		Peers: []Peer{{Object: objectOf(manifests.BGPPeerKind.Kind, "a"), NodeSelectors: rack("2")}, {Object: objectOf(manifests.BGPPeerKind.Kind, "b")}},
	}
	scope := maintenanceScope(s, true)
	if want := (maintenance.Signals{MachineConfigDrain: true, Labels: []string{"m"}}); !cmp.Equal(scope.Signals, want) {
		t.Errorf("signals %+v, want %+v", scope.Signals, want)
	}
	str := func(sels maintenance.Selectors) string {
		var out []string
		for _, s := range sels {
			out = append(out, s.String())
		}
		return strings.Join(out, " | ")
	}
	var got []string
	for _, ad := range scope.Advertisements {
		line := ad.Kind + "/" + ad.Name + " nodes[" + str(ad.NodeSelectors) + "]"
		if ad.BGP {
			for _, p := range ad.Peers {
				line += " peer[" + str(p) + "]"
			}
		}
		got = append(got, line)
	}
	want := []string{"L2Advertisement/l2 nodes[rack=1]", "BGPAdvertisement/to-a nodes[] peer[rack=2]",
		"BGPAdvertisement/to-all nodes[] peer[rack=2] peer[]", "L2Advertisement/refused nodes[" + labels.Nothing().String() + "]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("advertisements (-want +got):\n%s", diff)
	}
}

// The status lists the nodes out and held by name, and the condition is
// there while one is held, and gone after.
func TestReportMaintenance(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	held := maintenance.Held{Node: "a", Why: "it is cordoned", Advertisement: maintenance.Advertisement{Kind: "L2Advertisement", Name: "l2"}}
	s := &v1beta1.MetalLBStatus{}
	reportMaintenance(s, maintenance.Report{Out: []maintenance.Out{{Node: "c", Why: "drain"}}, Held: []maintenance.Held{held, held}}, 3, now)
	want := []v1beta1.NodeMaintenance{{Node: "a", State: v1beta1.NodeHeld, Reason: held.Message()}, {Node: "c", State: v1beta1.NodeOut, Reason: "drain"}}
	if diff := cmp.Diff(want, s.Maintenance); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	c := meta.FindStatusCondition(s.Conditions, ConditionMaintenanceHeld)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonLastNode || c.Message != held.Message() || c.ObservedGeneration != 3 {
		t.Errorf("condition %+v, want True, %s, saying %q once", c, ReasonLastNode, held.Message())
	}
	reportMaintenance(s, maintenance.Report{}, 3, now)
	if s.Maintenance != nil || meta.FindStatusCondition(s.Conditions, ConditionMaintenanceHeld) != nil {
		t.Errorf("after maintenance: %+v, %+v; want neither nodes nor the condition", s.Maintenance, s.Conditions)
	}
}
