package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

// memberlistConfig is the file the speakers read memberlist's timing from
// (ConfigMap metallb-memberlist-config, key config.json), with the field
// names of release.MetalLB's speaker. Every field is always written: the speaker reads a
// missing duration as an error and does not start, and a missing number or
// flag silently as 0 or false.
type memberlistConfig struct {
	TCPTimeout              duration
	IndirectChecks          int
	RetransmitMult          int
	SuspicionMult           int
	SuspicionMaxTimeoutMult int
	PushPullInterval        duration
	ProbeTimeout            duration
	ProbeInterval           duration
	DisableTcpPings         bool
	AwarenessMaxMultiplier  int
	GossipNodes             int
	GossipInterval          duration
	GossipToTheDeadTime     duration
	GossipVerifyIncoming    bool
	GossipVerifyOutgoing    bool
	EnableCompression       bool
	HandoffQueueDepth       int
	UDPBufferSize           int
	QueueCheckInterval      duration
}

// duration is written as Go's time.ParseDuration reads it ("200ms").
type duration time.Duration

func (d duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// lanTiming is memberlist's DefaultLANConfig (hashicorp/memberlist v0.5.1),
// which the speakers use when the file is absent: MetalLB's default.
var lanTiming = memberlistConfig{
	TCPTimeout: duration(10 * time.Second), IndirectChecks: 3, RetransmitMult: 4,
	SuspicionMult: 4, SuspicionMaxTimeoutMult: 6, PushPullInterval: duration(30 * time.Second),
	ProbeTimeout: duration(500 * time.Millisecond), ProbeInterval: duration(time.Second),
	AwarenessMaxMultiplier: 8, GossipNodes: 3, GossipInterval: duration(200 * time.Millisecond),
	GossipToTheDeadTime: duration(30 * time.Second), GossipVerifyIncoming: true, GossipVerifyOutgoing: true,
	EnableCompression: true, HandoffQueueDepth: 1024, UDPBufferSize: 1400,
	QueueCheckInterval: duration(30 * time.Second),
}

// fastTiming moves a dead speaker's addresses within 2 s. A speaker probes
// one member per ProbeInterval (P), walking its members in a shuffled order,
// and suspects one that acks neither directly within ProbeTimeout nor through
// others by the end of the interval. The suspicion lasts SuspicionMult (S) ×
// max(1, log10 N) × P once enough others confirm it (at once when N < S),
// up to SuspicionMaxTimeoutMult times that while they have not. On up to ten
// nodes a dead speaker is probed within 2P, suspected P later and dead S×P
// after that: (3+S)×P = 1.4 s with P = 200 ms and S = 4, and gossip every
// 100 ms (not 200) carries the news on. A live speaker is declared dead only
// when silent for about (1+S)×P = 1 s: it acks late, then does not refute the
// suspicion. S stays memberlist's 4, so that past four nodes it still takes
// two other speakers' confirmations to shorten a suspicion; the rest is the
// LAN profile.
var fastTiming = func() memberlistConfig {
	c := lanTiming
	c.ProbeInterval = duration(200 * time.Millisecond)
	c.ProbeTimeout = duration(100 * time.Millisecond)
	c.GossipInterval = duration(100 * time.Millisecond)
	return c
}()

// memberlistTimings are the profiles of the MetalLB object's
// spec.failureDetection.profile.
var memberlistTimings = map[v1beta1.FailureDetectionProfile]memberlistConfig{
	v1beta1.FailureDetectionDefault: lanTiming,
	v1beta1.FailureDetectionFast:    fastTiming,
}

// memberlistFile is the speakers' config.json for a profile, and a digest of
// it for the speakers' pod template: the speakers read the file only when
// they start, so a change must restart them, which a rolling update does.
func memberlistFile(profile v1beta1.FailureDetectionProfile) (file, digest string) {
	// Indented, so that kubectl shows the ConfigMap one field a line.
	b, err := json.MarshalIndent(memberlistTimings[profile], "", "  ")
	if err != nil {
		panic(err) // a struct of numbers, flags and strings always marshals
	}
	return string(b), MemberlistDigest(string(b))
}

// MemberlistDigest is the digest of the speakers' config.json that their pod
// template carries (MemberlistConfigAnnotation).
func MemberlistDigest(file string) string {
	sum := sha256.Sum256([]byte(file))
	return hex.EncodeToString(sum[:8])
}
