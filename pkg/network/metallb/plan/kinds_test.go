package plan

import (
	"testing"
)

// foundationOnly is a snapshot as the module reads it before every rendered
// kind's informers run: the Foundation's objects only.
func foundationOnly(s *Snapshot) {
	s.FoundationOnly = true
	s.Kinds = Foundation
}

func memberlistFound(s *Snapshot) { s.MemberlistFound = true }

// A snapshot of the Foundation's kinds only is planned on while MetalLB is
// not asked for and nothing tells that it was deployed; else the plan asks
// for every kind read, and plans nothing else.
func TestReadEveryKind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func(*testing.T, Options) *Snapshot
		want    bool
	}{
		{"nothing configured, nothing found: the Foundation's kinds are enough", with(empty, foundationOnly), false},
		{"a pool: MetalLB is asked for", with(empty, pool, foundationOnly), true},
		{"a MetalLB object: MetalLB is asked for", with(empty, withSpec(urgentSpeakers), foundationOnly), true},
		{"another operator's MetalLB CRD: the rest of its installation is to be found", with(empty, upstreamOperatorCRD, foundationOnly), true},
		{"the memberlist Secret: MetalLB was deployed, what it left may be pruned", with(empty, memberlistFound, foundationOnly), true},
		{"a pool on a platform that does not allow MetalLB: nothing is done, nothing more read", with(empty, pool, awsNodes, foundationOnly), false},
		{"every kind read already", with(empty, pool), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := planOptions()
			p := Make(tc.cluster(t, opts), opts, now)
			if p.ReadEveryKind != tc.want {
				t.Fatalf("ReadEveryKind %v, want %v", p.ReadEveryKind, tc.want)
			}
			if p.ReadEveryKind && (len(p.Apply) > 0 || len(p.Prune) > 0 || len(p.Statuses) > 0 || p.Tracking != nil || p.NodeAddress != nil) {
				t.Errorf("a plan that asks for every kind read plans more: %d applied, %d pruned, %d statuses, tracking %v, node-address scope %v",
					len(p.Apply), len(p.Prune), len(p.Statuses), p.Tracking, p.NodeAddress)
			}
		})
	}
}

// Nothing configured, on the Foundation's kinds only: the namespace and the
// CRDs are applied as with every kind read, and nothing is pruned.
func TestFoundationOnlyAppliesTheFoundation(t *testing.T) {
	opts := planOptions()
	got := Make(with(empty, foundationOnly)(t, opts), opts, now)
	want := Make(empty(t, opts), opts, now)
	checkList(t, "applied", names(got.Apply), names(want.Apply))
	if len(got.Prune) > 0 {
		t.Errorf("pruned %v", refNames(got.Prune))
	}
}
