package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Deactivate: deleting the advertisement and the pool (through MetalLB's own
// webhooks) ends the answers, and the operator removes the workloads, while
// MetalLB's CRDs and the memberlist key stay.
func TestDeactivate(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, _, ip, _ := newServingCluster(t)
	key := c.memberlistKey(t)

	kubectl(t, c.Env, "delete", "-n", metallbNamespace, "l2advertisement/l2", "ipaddresspool/pool")
	c.waitWorkloadsGone(t)
	for range 10 {
		if mac, err := c.Neighbors.Probe(ip, 100*time.Millisecond); err != nil || mac != nil {
			t.Fatalf("%s is still answered (by %s, error %v) after MetalLB was deactivated", ip, mac, err)
		}
	}
	if got := c.memberlistKey(t); got != key {
		t.Error("the memberlist key changed or went on deactivation")
	}
	for _, crd := range []string{"ipaddresspools.metallb.io", "l2advertisements.metallb.io", "bgppeers.metallb.io"} {
		kubectl(t, c.Env, "get", "crd", crd)
	}
	t.Logf("after deactivation, %s is not answered; the CRDs and the memberlist key remain", ip)
}

// waitWorkloadsGone waits until the controller, the speakers and their pods are gone.
func (c *metallbCluster) waitWorkloadsGone(t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"controller", "frr-k8s-statuscleaner"} {
			if _, err := c.Client.AppsV1().Deployments(metallbNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		for _, name := range []string{"speaker", "frr-k8s-daemon"} {
			if _, err := c.Client.AppsV1().DaemonSets(metallbNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		pods, err := c.Client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{LabelSelector: cluster.RunnerPods})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatal("MetalLB's and frr-k8s's workloads and their pods were not removed within 60s of deleting the configuration")
	}
}
