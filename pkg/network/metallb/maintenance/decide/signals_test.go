package decide

import (
	"reflect"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

func TestSignalsFor(t *testing.T) {
	kured := &v1beta1.Maintenance{NodeLabels: []string{"kured.io/rebooting"}}
	for _, tc := range []struct {
		name      string
		openshift bool
		setting   *v1beta1.Maintenance
		want      Signals
	}{
		{"OpenShift, unset: the machine-config daemon's drains", true, nil, Signals{MachineConfigDrain: true}},
		{"elsewhere, unset: off", false, nil, Signals{}},
		{"elsewhere, a label named", false, kured, Signals{Labels: []string{"kured.io/rebooting"}}},
		{"elsewhere, cordons asked", false, &v1beta1.Maintenance{Cordon: true}, Signals{Cordon: true}},
		{"OpenShift, a taint named too", true, &v1beta1.Maintenance{NodeTaints: []string{"example.com/down"}},
			Signals{MachineConfigDrain: true, Taints: []string{"example.com/down"}}},
		{"OpenShift, disabled", true, &v1beta1.Maintenance{Mode: v1beta1.MaintenanceDisabled}, Signals{}},
		{"elsewhere, disabled with a label named", false, &v1beta1.Maintenance{Mode: v1beta1.MaintenanceDisabled, NodeLabels: kured.NodeLabels}, Signals{}},
		{"elsewhere, enabled with nothing named: off", false, &v1beta1.Maintenance{Mode: v1beta1.MaintenanceEnabled}, Signals{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SignalsFor(tc.openshift, tc.setting)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SignalsFor = %+v, want %+v", got, tc.want)
			}
			if got.Any() != (tc.want.MachineConfigDrain || tc.want.Cordon || len(tc.want.Labels)+len(tc.want.Taints) > 0) {
				t.Errorf("Any() = %t for %+v", got.Any(), got)
			}
		})
	}
}
