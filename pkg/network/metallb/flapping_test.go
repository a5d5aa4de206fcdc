package metallb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// flapSwitches and flapPeriod are how the flapping story changes the spec:
// 50 switches in 10 s, an even number, so that it ends on the valid spec.
const (
	flapSwitches = 50
	flapPeriod   = 200 * time.Millisecond
)

// A MetalLB object switched between a valid and an invalid spec 50 times in
// 10 s costs writes in proportion to the states reached, not to the events
// each switch gives: at most 3 per switch (the MetalLB object's status, the
// ClusterOperator's and the Events), and the last state is reported within a
// second of the last switch.
func TestFlappingSpecWritesPerOutcome(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{})
	m.installClusterOperator(t)
	m.run(t, testOptions())
	if err := m.client.Create(t.Context(), &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	m.waitSpeakerDaemonSet(t)
	m.waitDegraded(t, clusterObject, isFalse)
	settle(t, m)

	// Switch i sets specs[i%2]: the last of an even number sets the valid one.
	specs := [2]string{`speakerConfig: {priorityClassName: does-not-exist}`, `logLevel: info`}
	before := m.writeCounts()
	tick := time.NewTicker(flapPeriod)
	defer tick.Stop()
	for i := range flapSwitches {
		if err := m.setSpec(t, specs[i%2]); err != nil {
			t.Fatal(err)
		}
		if i < flapSwitches-1 {
			<-tick.C
		}
	}
	last := time.Now()
	m.waitDegraded(t, clusterObject, isFalse)
	took := time.Since(last)
	if took > time.Second {
		t.Errorf("the last state was reported %s after the last switch, want at most 1s", took)
	}
	settle(t, m)
	n, kinds := m.writesSince(before)
	if n > 3*flapSwitches {
		t.Errorf("%d switches made %d writes, want at most %d: %s", flapSwitches, n, 3*flapSwitches, kinds)
	}
	t.Logf("%d switches made %d writes: %s; the last state reported %s after the last switch", flapSwitches, n, kinds, took.Round(time.Millisecond))
}

// installClusterOperator installs OpenShift's ClusterOperator API and the
// operator's ClusterOperator, as the cluster-version operator does.
func (m *moduleEnv) installClusterOperator(t *testing.T) {
	t.Helper()
	m.create(t, filepath.Join("..", "..", "status", "publish", "testdata", "clusteroperators-crd.yaml"))
	waitFor(t, "the ClusterOperator API", 30*time.Second, func(ctx context.Context) (bool, error) {
		err := m.client.List(ctx, &configv1.ClusterOperatorList{})
		return err == nil, nil
	})
	m.create(t, filepath.Join("..", "..", "..", "manifests", "0000_70_metallb_06_clusteroperator.yaml"))
}
