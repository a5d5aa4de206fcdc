package plan

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// The mistakes in MetalLB's configuration the module tells about: each a
// row, each mistake "Reason Kind/name: part of the message".
func TestConfigMistakes(t *testing.T) {
	pool := configObject(manifests.IPAddressPoolKind.Kind, manifests.DefaultNamespace, "pool1")
	pool.Labels = map[string]string{"tier": "web"}
	l2 := func(pools ...string) Advertisement {
		return Advertisement{Object: configObject(manifests.L2AdvertisementKind.Kind, manifests.DefaultNamespace, "l2"), Pools: pools}
	}
	bgp := func(pools []string, selectors []metav1.LabelSelector, peers ...string) Advertisement {
		return Advertisement{Object: configObject(manifests.BGPAdvertisementKind.Kind, manifests.DefaultNamespace, "bgp"), Pools: pools, PoolSelectors: selectors, Peers: peers}
	}
	peer := func(hold *metav1.Duration) Peer {
		return Peer{Object: configObject("BGPPeer", manifests.DefaultNamespace, "router"), HoldTime: hold}
	}
	web := []metav1.LabelSelector{{MatchLabels: map[string]string{"tier": "web"}}}
	for _, tc := range []struct {
		name   string
		ads    []Advertisement
		peers  []Peer
		states []ConfigState
		want   []string
	}{
		{"an L2Advertisement for every pool: nothing to tell", []Advertisement{l2()}, nil, nil, nil},
		{"no advertisement: the pool is not announced", nil, nil, nil,
			[]string{"PoolNotAnnounced IPAddressPool/pool1: is selected by no L2Advertisement or BGPAdvertisement"}},
		{"a BGPAdvertisement naming a pool that does not exist", []Advertisement{bgp([]string{"pool2"}, nil)}, []Peer{peer(nil)}, nil,
			[]string{"SelectsNoPool BGPAdvertisement/bgp: selects no IPAddressPool", "PoolNotAnnounced IPAddressPool/pool1"}},
		{"a BGPAdvertisement selecting the pool by label, no BGPPeer", []Advertisement{bgp(nil, web)}, nil, nil,
			[]string{"NoBGPPeer IPAddressPool/pool1: is announced only by BGP (BGPAdvertisement bgp), and no BGPPeer exists in metallb-system"}},
		{"a BGPAdvertisement and a BGPPeer: nothing to tell", []Advertisement{bgp([]string{"pool1"}, nil)}, []Peer{peer(nil)}, nil, nil},
		{"BGP and layer 2, no BGPPeer: layer 2 announces it", []Advertisement{bgp(nil, nil), l2("pool1")}, nil, nil, nil},
		{"a BGPAdvertisement naming a BGPPeer that does not exist", []Advertisement{bgp(nil, nil, "router", "spine")}, []Peer{peer(nil)}, nil,
			[]string{`NoSuchPeer BGPAdvertisement/bgp: announces to BGPPeer "spine", which does not exist in metallb-system`}},
		{"a BGPPeer with holdTime 0s", []Advertisement{l2()}, []Peer{peer(&metav1.Duration{})}, nil,
			[]string{"HoldTimeZero BGPPeer/router: has holdTime 0s"}},
		{"a BGPPeer with a hold time: nothing to tell", []Advertisement{l2()}, []Peer{peer(&metav1.Duration{Duration: 90 * time.Second})}, nil, nil},
		{"MetalLB's components report the configuration invalid: once per report", []Advertisement{l2()}, nil, invalidStates(6, "bad pool", "worse"),
			[]string{"ConfigurationInvalid ConfigurationState/controller: MetalLB reports the configuration invalid (controller, speaker on kwok-0, speaker on kwok-1 and 3 more; kubectl get configurationstates -n metallb-system): bad pool",
				"ConfigurationInvalid ConfigurationState/speaker-kwok-5: MetalLB reports the configuration invalid (speaker on kwok-5; kubectl get configurationstates -n metallb-system): worse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range configMistakes([]*metav1.PartialObjectMetadata{pool}, tc.ads, tc.peers, tc.states) {
				got = append(got, fmt.Sprintf("%s %s/%s: %s", c.reason, c.regarding.GetObjectKind().GroupVersionKind().Kind, c.regarding.GetName(), c.message))
			}
			checkList(t, "mistakes", got, tc.want)
		})
	}
}

// invalidStates are the reports of the controller and of speakers on nodes
// kwok-0 onwards, all but the last reporting first, the last second.
func invalidStates(speakers int, first, second string) []ConfigState {
	states := []ConfigState{{Object: configObject("ConfigurationState", manifests.DefaultNamespace, "controller"), Component: "controller",
		Result: manifests.ConfigurationInvalid, ErrorSummary: first}}
	for i := range speakers {
		node := fmt.Sprintf("kwok-%d", i)
		summary := first
		if i == speakers-1 {
			summary = second
		}
		states = append(states, ConfigState{Object: configObject("ConfigurationState", manifests.DefaultNamespace, "speaker-"+node),
			Component: manifests.SpeakerName, Node: node, Result: manifests.ConfigurationInvalid, ErrorSummary: summary})
	}
	states = append(states, ConfigState{Object: configObject("ConfigurationState", manifests.DefaultNamespace, "valid"), Component: "speaker",
		Node: "kwok-9", Result: "Valid"})
	return states
}

// A mistake in the user's configuration is told on its object and in the
// status's message, and never makes the operator Degraded.
func TestPlanTellsConfigMistakes(t *testing.T) {
	opts := planOptions()
	cluster := settled(with(running("A"), withSpec(v1beta1.MetalLBSpec{}), func(s *Snapshot) {
		s.Advertisements = []Advertisement{{Object: configObject(manifests.BGPAdvertisementKind.Kind, manifests.DefaultNamespace, "bgp")}}
	}))
	p := Make(cluster(t, opts), opts, now)
	checkPlan(t, p, p.Report(nil), planned{version: "A",
		events: []string{"Warning NoBGPPeer IPAddressPool/pool1: is announced only by BGP (BGPAdvertisement bgp), and no BGPPeer exists"},
		conditions: []string{"Degraded False AsExpected: MetalLB runs as configured. IPAddressPool metallb-system/pool1 is announced only by BGP",
			"Available True AsExpected"}})
}
