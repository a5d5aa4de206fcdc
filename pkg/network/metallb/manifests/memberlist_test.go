package manifests

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// speakerReads are the fields release.MetalLB's speaker reads from
// config.json (internal/speakerlist, memberlistFileConfig), copied from there
// as the oracle the rendered file is held to.
var speakerReads = []string{"TCPTimeout", "IndirectChecks", "RetransmitMult", "SuspicionMult",
	"SuspicionMaxTimeoutMult", "PushPullInterval", "ProbeTimeout", "ProbeInterval", "DisableTcpPings",
	"AwarenessMaxMultiplier", "GossipNodes", "GossipInterval", "GossipToTheDeadTime", "GossipVerifyIncoming",
	"GossipVerifyOutgoing", "EnableCompression", "HandoffQueueDepth", "UDPBufferSize", "QueueCheckInterval"}

// Every profile's file has every field the speaker reads, and nothing else;
// no number is 0 (which a missing one would silently become) and every
// duration parses and is positive.
func TestMemberlistFileHasEveryField(t *testing.T) {
	for profile := range memberlistTimings {
		file, _ := memberlistFile(profile)
		var fields map[string]any
		if err := json.Unmarshal([]byte(file), &fields); err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		for _, name := range speakerReads {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s: config.json lacks %s", profile, name)
			}
		}
		for name, v := range fields {
			if !slices.Contains(speakerReads, name) {
				t.Errorf("%s: config.json has %s, which the speaker does not read", profile, name)
			}
			switch v := v.(type) {
			case float64:
				if v <= 0 {
					t.Errorf("%s: %s is %v", profile, name, v)
				}
			case string:
				if d, err := time.ParseDuration(v); err != nil || d <= 0 {
					t.Errorf("%s: %s is %q, not a positive duration", profile, name, v)
				}
			}
		}
	}
}

// The profiles keep the bounds their comment derives from memberlist's
// formulas, on three nodes (the end-to-end cluster) and on a hundred: how
// long a dead speaker may go undetected (probed within 2 intervals, suspected
// one later, dead after the minimum suspicion), and how long a live one must
// be silent to be declared dead (a missed probe, then no refutation).
func TestMemberlistProfilesBounds(t *testing.T) {
	cases := []struct {
		profile    v1beta1.FailureDetectionProfile
		nodes      int
		maxDetect  time.Duration
		minSilence time.Duration
	}{
		{v1beta1.FailureDetectionDefault, 3, 7 * time.Second, 5 * time.Second},
		{v1beta1.FailureDetectionFast, 3, 1500 * time.Millisecond, time.Second},
		{v1beta1.FailureDetectionFast, 100, 2500 * time.Millisecond, 1500 * time.Millisecond},
	}
	for _, c := range cases {
		cfg := memberlistTimings[c.profile]
		probe := time.Duration(cfg.ProbeInterval)
		scale := math.Max(1, math.Log10(float64(c.nodes)))
		suspicion := time.Duration(float64(cfg.SuspicionMult) * scale * float64(probe))
		detect, silence := 3*probe+suspicion, probe+suspicion
		if detect > c.maxDetect {
			t.Errorf("%s on %d nodes: a dead speaker is detected within %s; want at most %s", c.profile, c.nodes, detect, c.maxDetect)
		}
		if silence < c.minSilence {
			t.Errorf("%s on %d nodes: a live speaker silent for %s is declared dead; want at least %s tolerated", c.profile, c.nodes, silence, c.minSilence)
		}
		if cfg.ProbeTimeout >= cfg.ProbeInterval {
			t.Errorf("%s: ProbeTimeout %s leaves no time for indirect probes within ProbeInterval %s", c.profile, time.Duration(cfg.ProbeTimeout), probe)
		}
	}
}
