package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// crashEvery makes the crash stories kill the operator after every one of
// its writes (`make test-crashes`); without it each story kills it after
// crashSamples writes drawn with crashSeed.
var crashEvery = flag.Bool("crash-every", false, "kill the operator after every write of the crash stories, not a sample")

// crashFrom is the first write after which -crash-every kills, to go on
// with a long run.
var crashFrom = flag.Int("crash-from", 1, "with -crash-every, the first write after which to kill the operator")

const (
	crashSamples = 2
	crashSeed    = 1
	// crashSettles bounds each run of a crash story, from the user's step
	// (the crash and the restart included) to the end state.
	crashSettles = 3 * time.Minute
)

// crashStory is a story of the crash harness: the cluster as the operator
// finds it, the user's step once it runs, and the end state it must reach.
type crashStory struct {
	nodes int
	// before makes the cluster the operator finds (another operator may run
	// and stop in it).
	before func(*crashRun, *testing.T)
	// act is the user's step, the operator counted running.
	act func(*crashRun, *testing.T)
	// environ is the counted operator's environment: its release.
	environ []string
	// version is the version the end state reports ("": no MetalLB object
	// is left to report it); the speakers then run speakerImage.
	version, speakerImage string
	// versionKept: the story keeps the version reported before its step,
	// and makes no report to check.
	versionKept bool
	// maxUnavailable is the MetalLB object's: how many speakers may be down
	// at once, once all ran, in a story that keeps MetalLB running.
	maxUnavailable int
}

// crashRun is one run of a crash story, against a control plane of its own.
type crashRun struct {
	env    *testenv.Env
	client kubernetes.Interface
	dyn    dynamic.Interface
	story  crashStory
	// promises, once the story's step comes.
	promises *promises
}

// crashResult is what a run of a crash story ended with.
type crashResult struct {
	writes   int           // the operator's counted writes
	killed   bool          // after the k-th
	took     time.Duration // from the user's step to the end state
	recovery time.Duration // from the restart to the end state
	end      []string      // crashRun.endState
}

// runCrashStory runs a story once, killing the operator after its k-th
// counted write (0: never), starting it again in the same pod at once, and
// checks the promises that hold whatever write came last.
func runCrashStory(t *testing.T, s crashStory, k int) crashResult {
	env := testenv.New(t, testenv.Options{ControllerManager: true, Scheduler: true, Nodes: testenv.Nodes(s.nodes)})
	r := &crashRun{env: env, client: kubernetes.NewForConfigOrDie(env.Config), dyn: dynamic.NewForConfigOrDie(env.Config), story: s}
	createNamespaces(t, env, operatorNamespace, metallbNamespace)
	s.before(r, t)
	checked := s.version
	if s.versionKept {
		checked = ""
	}
	p := watchPromises(t, r.client, r.dyn, s, checked)
	if _, err := r.dyn.Resource(metallbs).Namespace(metallbNamespace).List(t.Context(), metav1.ListOptions{}); err == nil {
		p.watchVersion(t) // else once served (applyMetalLB)
	}
	r.promises = p

	writes := newCrashWrites(k)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the operator's writes:\n%s", strings.Join(writes.all(), "\n"))
		}
	})
	kubeconfig := testenv.ServeThrough(t, env.Kubeconfig, writes.wrap)
	c := &crashProcess{t: t, writes: writes, kubeconfig: kubeconfig,
		environ: append(slices.Clone(s.environ), operator.PodNameEnv+"=cluster-network-operator-7c9d5-x2v4k")}
	c.start()
	s.act(r, t)
	acted := time.Now()
	c.settle(r, k)
	// A write after the end state kills no more; one that came first did.
	if writes.disarm() && c.restarted.IsZero() {
		c.settle(r, k)
	}
	res := crashResult{writes: writes.countedWrites(), killed: !c.restarted.IsZero(), took: time.Since(acted)}
	if res.killed {
		res.recovery = time.Since(c.restarted)
	}
	res.end = r.endState(t)
	r.checkPromises(t, writes)
	select {
	case <-c.op.done:
		t.Errorf("the operator exited; log:\n%s", c.op.log())
	default:
	}
	return res
}

// crashProcess is the operator's process of a crash story's run, started
// again, in the same pod, once the proxy killed it.
type crashProcess struct {
	t          *testing.T
	writes     *crashWrites
	kubeconfig string
	environ    []string
	op         *runningOperator
	restarted  time.Time // zero until it was started again
}

func (c *crashProcess) start() {
	c.op = startOperatorAs(c.t, c.kubeconfig, c.environ, crashFlags...)
	c.writes.runs(c.op)
}

// settle waits for the story's end state, starting the process again as
// soon as it was killed.
func (c *crashProcess) settle(r *crashRun, k int) {
	err := wait.PollUntilContextTimeout(c.t.Context(), 100*time.Millisecond, crashSettles, true, func(ctx context.Context) (bool, error) {
		if c.restarted.IsZero() && !c.writes.killedAt().IsZero() {
			c.start()
			c.restarted = time.Now()
		}
		settled, err := r.settled(ctx)
		// Killed since, by its last write: the end state must hold restarted too.
		return settled && c.restarted.IsZero() == c.writes.killedAt().IsZero(), err
	})
	if err != nil {
		c.t.Fatalf("the story did not reach its end state within %s (killed after write %d: %v): %v", crashSettles, k, !c.restarted.IsZero(), err)
	}
}

// checkPromises fails the test on each promise the run broke: as the
// watches saw it, and in the operator's writes.
func (r *crashRun) checkPromises(t *testing.T, writes *crashWrites) {
	t.Helper()
	r.promises.check(t)
	for _, d := range writes.forbiddenDeletes() {
		t.Errorf("the operator deleted what it never deletes: %s", d)
	}
	if r.story.version != "" { // the story keeps MetalLB running
		r.promises.checkDown(t)
		for _, d := range writes.deletesOf("daemonsets", "pods") {
			t.Errorf("the operator deleted a speaker's DaemonSet or pod, taking speakers down beside the rollout: %s", d)
		}
	}
}

// crashFlags start the operator as the crash stories run it: no MetalLB
// webhooks, which no pod of kwok's serves.
var crashFlags = []string{"--metallb-webhooks=false", "--platform=BareMetal"}

// crashPoints are the writes after which a story's runs kill the operator:
// all of the crash-free run's, or crashSamples of them drawn with crashSeed.
func crashPoints(name string, writes int) []int {
	all := make([]int, writes)
	for i := range all {
		all[i] = i + 1
	}
	if *crashEvery {
		return all[min(max(*crashFrom, 1), writes+1)-1:]
	}
	if writes <= crashSamples {
		return all
	}
	rng := rand.New(rand.NewPCG(crashSeed, uint64(len(name))))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	picked := all[:crashSamples]
	slices.Sort(picked)
	return picked
}

// crashHarness runs a story without a crash, then killed after each of its
// crash points, and compares each end state with the crash-free one.
func crashHarness(t *testing.T, name string, s crashStory) {
	world.SideBySide(t, world.Long)
	clean := runCrashStory(t, s, 0)
	t.Logf("%s without a crash: %d writes, the end state %s after the step", name, clean.writes, clean.took.Round(time.Millisecond))
	var kills int
	var longest time.Duration
	for _, k := range crashPoints(name, clean.writes) {
		t.Run(fmt.Sprintf("killed after write %d", k), func(t *testing.T) {
			got := runCrashStory(t, s, k)
			if !got.killed {
				t.Logf("the run made %d writes, fewer than %d: not killed", got.writes, k)
				return
			}
			kills++
			longest = max(longest, got.recovery)
			if diff := cmp.Diff(clean.end, got.end); diff != "" {
				t.Errorf("the end state differs from the crash-free run's (-clean +killed):\n%s", diff)
			}
			t.Logf("killed after write %d of %d; the end state %s after the restart, %s after the step", k, got.writes,
				got.recovery.Round(time.Millisecond), got.took.Round(time.Millisecond))
		})
	}
	t.Logf("CRASH TABLE: | %s | %d writes | %d kills | longest restart → end state %s |", name, clean.writes, kills, longest.Round(100*time.Millisecond))
}

// TestCrashActivation: the operator killed after any write of an
// activation on three nodes.
func TestCrashActivation(t *testing.T) {
	crashHarness(t, "activation", crashStory{
		nodes: 3, before: func(*crashRun, *testing.T) {}, act: (*crashRun).applyMetalLB,
		environ: cluster.Release("4.22.0", release.MetalLB), version: "4.22.0", speakerImage: speakerImage(release.MetalLB), maxUnavailable: 1,
	})
}

// TestCrashUpgrade: the operator of the next release killed after any
// write of its upgrade of ten nodes, three at a time.
func TestCrashUpgrade(t *testing.T) {
	crashHarness(t, "upgrade", crashStory{
		nodes: 10, before: activatedBy(cluster.Release("4.22.0", release.MetalLB), "4.22.0"), act: func(*crashRun, *testing.T) {},
		environ: cluster.Release("4.22.1", release.MetalLB+"-1"), version: "4.22.1", speakerImage: speakerImage(release.MetalLB + "-1"), maxUnavailable: 3,
	})
}

// TestCrashAdoption: the operator killed after any write of its takeover of
// a hand install of the same release, configured by the MetalLB object
// before the user hands it over.
func TestCrashAdoption(t *testing.T) {
	crashHarness(t, "adoption", crashStory{
		nodes: 3, before: (*crashRun).handInstall, act: func(r *crashRun, t *testing.T) {
			r.applyMetalLB(t) // the operator stands down beside the hand install, until:
			kubectl(t, r.env, "annotate", "namespace", metallbNamespace, "networkoperator.openshift.io/adopt-metallb=true")
		},
		environ: cluster.Release("4.22.0", release.MetalLB), version: "4.22.0", speakerImage: speakerImage(release.MetalLB), maxUnavailable: 1,
	})
}

// TestCrashBackendSwitch: the operator killed after any write of the switch
// from MetalLB's native BGP to frr-k8s.
func TestCrashBackendSwitch(t *testing.T) {
	a := cluster.Release("4.22.0", release.MetalLB)
	crashHarness(t, "frr-k8s backend switch", crashStory{
		nodes: 3, before: activatedBy(a, "4.22.0"), act: func(r *crashRun, t *testing.T) {
			kubectl(t, r.env, "patch", "metallb", "metallb", "-n", metallbNamespace, "--type=merge", "-p", `{"spec":{"bgpBackend":"frr-k8s"}}`)
		},
		environ: a, version: "4.22.0", versionKept: true, speakerImage: speakerImage(release.MetalLB), maxUnavailable: 1,
	})
}

// TestCrashDeactivation: the operator killed after any write of a
// deactivation, the MetalLB object deleted.
func TestCrashDeactivation(t *testing.T) {
	a := cluster.Release("4.22.0", release.MetalLB)
	crashHarness(t, "deactivation", crashStory{
		nodes: 3, before: activatedBy(a, "4.22.0"), act: func(r *crashRun, t *testing.T) {
			kubectl(t, r.env, "delete", "metallb", "metallb", "-n", metallbNamespace)
		},
		environ: a, maxUnavailable: 1,
	})
}

func speakerImage(tag string) string { return "quay.io/metallb/speaker:" + tag }
