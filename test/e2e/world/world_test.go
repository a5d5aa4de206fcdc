package world

import (
	"slices"
	"sync"
	"testing"
)

func TestRunPatternSelectsTheTestAndKeepsTheSubtestLevels(t *testing.T) {
	for _, tc := range []struct{ test, pattern, want string }{
		{"TestBGPUpgrade", "", "^TestBGPUpgrade$"},
		{"TestBGPUpgrade", "TestBGP", "^TestBGPUpgrade$"},
		{"TestBGPUpgrade", "TestBGP/frr-k8s", "^TestBGPUpgrade$/frr-k8s"},
		{"TestBGPUpgrade/frr-k8s", "TestBGP", "^TestBGPUpgrade$/^frr-k8s$"},
		{"TestBGPUpgrade/frr-k8s", "TestBGP/k8s/step", "^TestBGPUpgrade$/^frr-k8s$/step"},
		{"TestFailover", "Test(A/B|Failover)/[/]x", "^TestFailover$/[/]x"},
		{"TestX/a.b", "", `^TestX$/^a\.b$`},
		// Alternatives first, then levels, as testing reads -run: each
		// alternative that selects the test keeps its own subtest levels.
		{"TestFailover", "TestFailover$|TestBGPUpgrade$/frr-k8s", "^TestFailover$"},
		{"TestBGPUpgrade/frr-k8s", "TestFailover$|TestBGPUpgrade$/frr-k8s", "^TestBGPUpgrade$/^frr-k8s$"},
		{"TestFailover", "TestF/Default|TestF/Fast|TestB", "^TestFailover$/Default|^TestFailover$/Fast"},
		{"TestFailover", "Test(Failover|X)/a|b", "^TestFailover$/a"},
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

func TestTurnsLetLongStoriesFirstThenInTheOrderTheyStartedThenThoseLast(t *testing.T) {
	g := newTurns(1)
	modes := map[string]Mode{"short-1": Beside, "last-1": Last, "long-1": Long, "short-2": Beside, "long-2": Long}
	names := []string{"short-1", "last-1", "long-1", "short-2", "long-2"}
	tickets := map[string]*ticket{}
	for _, name := range names {
		tickets[name] = g.register(modes[name])
	}
	admitted := make(chan string, len(names))
	var wg sync.WaitGroup
	for _, name := range slices.Backward(names) { // they arrive in any order
		wg.Go(func() {
			g.wait(tickets[name])
			admitted <- name
			g.done(tickets[name])
		})
	}
	wg.Wait()
	close(admitted)
	var got []string
	for name := range admitted {
		got = append(got, name)
	}
	if want := []string{"long-1", "long-2", "short-1", "short-2", "last-1"}; !slices.Equal(got, want) {
		t.Errorf("turns went %q, want %q", got, want)
	}
}

func TestStoriesLastRunOnlyBesideOneAnother(t *testing.T) {
	g := newTurns(4)
	long, first, second := g.register(Long), g.register(Last), g.register(Last)
	g.wait(long)
	admitted := make(chan *ticket, 2)
	for _, tk := range []*ticket{first, second} {
		go func() {
			g.wait(tk)
			admitted <- tk
		}()
	}
	g.mu.Lock()
	for !first.arrived || !second.arrived {
		g.changed.Wait()
	}
	waiting := slices.Contains(g.queue, first) || slices.Contains(g.queue, second)
	g.mu.Unlock()
	if !waiting {
		t.Fatal("a story Last was let in beside a long one")
	}
	g.done(long)
	<-admitted
	<-admitted
	late := g.register(Beside)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 2 || g.last != 2 {
		t.Errorf("%d stories run, %d of them Last; want the two Last side by side", g.running, g.last)
	}
	if g.fits(late) {
		t.Error("a story Beside would be let in beside those Last")
	}
}
