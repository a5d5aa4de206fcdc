package plan

import (
	"slices"
	"testing"
)

func TestPlatformOfNodes(t *testing.T) {
	for _, tc := range []struct {
		providerIDs []string
		want        string
	}{
		{nil, "None"},
		{[]string{"", ""}, "None"},
		{[]string{"kind://docker/kind/kind-control-plane"}, "BareMetal"},
		{[]string{"k3s://node1", ""}, "BareMetal"},
		{[]string{"metal3://openshift-machine-api/worker-0/abc"}, "BareMetal"},
		{[]string{"aws:///us-east-1a/i-0123456789abcdef0"}, "AWS"},
		{[]string{"", "gce://project/us-central1-a/node-1"}, "GCP"},
		{[]string{"kind://docker/kind/n1", "azure:///subscriptions/x/vm"}, "Azure"},
		{[]string{"vsphere://4211c5a1-7f2f-4d8a"}, "VSphere"},
		{[]string{"someprovider://x"}, "External"},
		{[]string{"kind://docker/kind/n1", "someprovider://x", "aws:///us-east-1a/i-0"}, "External"},
	} {
		var nodes []NodeProvider
		for i, id := range tc.providerIDs {
			nodes = append(nodes, NodeProvider{Name: string(rune('a' + i)), ProviderID: id})
		}
		got := platformOfNodes(nodes)
		if got.Type != tc.want {
			t.Errorf("provider IDs %q: platform %s (%s), want %s", tc.providerIDs, got.Type, got.Source, tc.want)
		}
		// The store lists nodes in no order: the node named is the same.
		slices.Reverse(nodes)
		if reversed := platformOfNodes(nodes); reversed != got {
			t.Errorf("provider IDs %q in reverse: %+v, in order: %+v", tc.providerIDs, reversed, got)
		}
	}
}
