package e2e

import (
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Address and answer: with a pool and an advertisement, the operator deploys
// MetalLB; the real controller gives a LoadBalancer Service an address from the
// pool and exactly one node's real speaker answers ARP for it.
func TestAddressAndAnswer(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c, _, ip, node := newServingCluster(t)
	t.Logf("the Service got %s", ip)
	if !inPool(ip) {
		t.Fatalf("the Service got %s, outside the pool %s-%s", ip, poolFirst, poolLast)
	}
	answers := map[string]bool{}
	for range 20 {
		macs, err := c.Neighbors.Answers(ip, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, mac := range macs {
			answers[c.nodeOf(t, mac)] = true
		}
	}
	if len(answers) != 1 || !answers[node] {
		t.Fatalf("ARP answers for %s came from %v; want exactly one node", ip, answers)
	}
	t.Logf("%s is answered by %s alone (20 probes)", ip, node)
}
