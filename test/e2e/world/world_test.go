package world

import "testing"

func TestRunPatternSelectsTheTestAndKeepsTheSubtestLevels(t *testing.T) {
	for _, tc := range []struct{ test, pattern, want string }{
		{"TestBGPUpgrade", "", "^TestBGPUpgrade$"},
		{"TestBGPUpgrade", "TestBGP", "^TestBGPUpgrade$"},
		{"TestBGPUpgrade", "TestBGP/frr-k8s", "^TestBGPUpgrade$/frr-k8s"},
		{"TestBGPUpgrade/frr-k8s", "TestBGP", "^TestBGPUpgrade$/^frr-k8s$"},
		{"TestBGPUpgrade/frr-k8s", "TestBGP/k8s/step", "^TestBGPUpgrade$/^frr-k8s$/step"},
		{"TestFailover", "Test(A/B|Failover)/[/]x", "^TestFailover$/[/]x"},
		{"TestX/a.b", "", `^TestX$/^a\.b$`},
	} {
		if got := runPattern(tc.test, tc.pattern); got != tc.want {
			t.Errorf("runPattern(%q, %q) = %q, want %q", tc.test, tc.pattern, got, tc.want)
		}
	}
}

func TestWorldNamesAreNamespaceNames(t *testing.T) {
	for test, want := range map[string]string{
		"TestBGPUpgrade":         "bgpupgrade",
		"TestBGPUpgrade/frr-k8s": "bgpupgrade-frr-k8s",
	} {
		if got := worldName(test); got != want {
			t.Errorf("worldName(%q) = %q, want %q", test, got, want)
		}
	}
}
