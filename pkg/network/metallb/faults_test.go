package metallb

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// faultSlack is how many times longer a story may take to converge when the
// module's requests meet testenv.DefaultFaultRates.
const faultSlack = 6

// quietFor is how long the module must make no write for its writes to have
// fallen to zero once the faults stopped: what the stories leave moving (a
// rollout's last pods) is over by then.
const quietFor = 5 * time.Second

// The module's stories again, with faults in the module's requests
// (testenv.DefaultFaultRates: a quarter of its writes answered 500, 503, 429
// or 409 and not made, a tenth of its requests held 1-3 s, every watch cut
// within 20 s; and a tenth of the writes made, their answers lost, the first
// among them): each converges within its bounds times faultSlack, loses
// nothing its checks look at (the memberlist key, the CRDs, the user's
// pools), never reports a version early, and once the faults stop its
// writes fall to zero: it goes quiet, and forced reconciles write nothing.
// The seed is logged; FAULT_SEED sets it (`make test-faults` runs the
// stories with random seeds).
func TestStoriesUnderFaults(t *testing.T) {
	t.Parallel()
	seed := testenv.FaultSeed(t)
	for i, story := range []struct {
		name string
		env  testenv.Options
		opts Options
		run  func(*testing.T, *moduleEnv)
	}{
		{"activation, drift and deactivation", activationEnv, testOptions(), activationStory},
		// One node at a time: 50 steps, in each of which the version must
		// not be reported early.
		{"upgrade", slowPodsUpgradeEnv, releaseOptions("A"), func(t *testing.T, m *moduleEnv) {
			upgradeStory(t, m, intstr.FromInt32(1), nil)
		}},
		{"adoption", adoptionEnv, testOptions(), adoptionStory},
	} {
		t.Run(story.name, func(t *testing.T) {
			t.Parallel()
			m := newModuleEnv(t, story.env)
			rates := testenv.DefaultFaultRates
			rates.FailFirstWrites = 1 // the adoption story makes some 15-25 writes
			rates.AnswerLost, rates.LoseFirstAnswers = 0.1, 1
			m.faults = testenv.NewFaults(seed+uint64(i), rates)
			m.run(t, story.opts)
			story.run(t, m)
			m.faults.Stop()
			seen := m.faults.Seen()
			t.Logf("faults seen: %s", seen)
			if len(seen.Failed) == 0 || seen.Delayed == 0 || seen.AnswersLost == 0 {
				t.Errorf("the story met no failed write, no delay or no lost answer: %s", seen)
			}
			m.waitQuiet(t, quietFor, m.within(30*time.Second))
			settle(t, m)
			m.assertWritesNothing(t, 20)
		})
	}
}

// slowPodsUpgradeEnv is upgradeEnv with pods made ready 400 ms after their
// creation. kwok makes them ready at once, and rolls 50 nodes out in some
// 3 s, which the faults' delays (1-3 s a request held, 1 s after a 429) can
// fill, leaving no write of the rollout's progress made before its end: the
// story's check that Progressing told how far the speakers were could then
// not hold. A kubelet takes longer still: the speaker's readiness probe
// waits 10 s.
var slowPodsUpgradeEnv = func() testenv.Options {
	env := upgradeEnv
	env.PodsReadyAfter = 400 * time.Millisecond
	return env
}()

// waitQuiet waits until the module has made no write for quiet, within bound.
func (m *moduleEnv) waitQuiet(t *testing.T, quiet, bound time.Duration) {
	t.Helper()
	last, since := m.writes(), time.Now()
	waitFor(t, "the module to stop writing", bound, func(context.Context) (bool, error) {
		if n := m.writes(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= quiet, nil
	})
}
