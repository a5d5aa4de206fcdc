package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// apiServerDown is how long kube-apiserver stays down in the restart story.
const apiServerDown = time.Minute

// The control plane restarted in the middle of an upgrade on 50 nodes, once
// a fifth of the speakers run the new release: kube-apiserver stopped, left
// down a minute and started again (every watch ends, every connection is
// refused meanwhile), or etcd with its data. The upgrade completes, the version is reported
// only with every speaker on it, the memberlist key is kept, and the module
// runs on (its manager stops without error at the end).
func TestUpgradeThroughControlPlaneRestarts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		restart func(*testenv.Env) error
	}{
		// Down for longer than the node monitor's grace (50 s): every node's
		// Lease expires meanwhile, and kube-controller-manager marks their
		// pods not ready once it is back, as it would on a cluster whose
		// API server came back that late.
		{"kube-apiserver down a minute", func(e *testenv.Env) error { return e.RestartAPIServer(apiServerDown) }},
		{"etcd", (*testenv.Env).RestartEtcd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := startModule(t, upgradeEnv, releaseOptions("A"))
			key := m.runningA(t, intstr.FromString("10%"))
			m.stop()
			m.run(t, releaseOptions("B"))
			waitFor(t, "a fifth of the speakers on B", m.within(2*time.Minute), func(ctx context.Context) (bool, error) {
				return m.speakersOn(ctx, "B") >= upgradeNodes/5, nil
			})
			if on := m.speakersOn(t.Context(), "B"); on == upgradeNodes {
				t.Fatalf("every speaker ran B before the restart: not in the middle of the upgrade")
			}
			start := time.Now()
			if err := tc.restart(m.Env); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s restarted in %s", tc.name, time.Since(start).Round(time.Millisecond))
			waitFor(t, "version B reported", m.within(3*time.Minute), func(ctx context.Context) (bool, error) {
				o := &v1beta1.MetalLB{}
				if err := m.client.Get(ctx, clusterObject, o); err != nil {
					return false, nil // the API server may still be coming back
				}
				return o.Status.Version == "B", nil
			})
			t.Logf("upgrade done %s after the restart began", time.Since(start).Round(time.Millisecond))
			m.assertAllSpeakers(t, "B")
			if m.memberlistKey(t) != key {
				t.Error("the memberlist key changed")
			}
		})
	}
}

// speakersOn counts the speakers whose image is of version; an error reads
// as none.
func (m *moduleEnv) speakersOn(ctx context.Context, version string) int {
	pods, err := kubernetes.NewForConfigOrDie(m.Config).CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "component=speaker"})
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range pods.Items {
		if strings.HasSuffix(p.Spec.Containers[0].Image, ":"+version) && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}
