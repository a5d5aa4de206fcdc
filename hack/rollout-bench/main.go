package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// The goals for an upgrade at 2,000 nodes with maxUnavailable 10 %: issue
// 28's, and issue 46's writes, which do not grow with the rollout's length.
const (
	writesGoal     = 50
	cpuGoal        = 5 * time.Second
	paceGoal       = 1.1 // the operator's upgrade over the DaemonSet controller's rollout
	versionLagGoal = time.Second
)

// cpuProfileSeconds is how long -cpu-profile profiles: about an upgrade.
const cpuProfileSeconds = "100"

// operatorUser is who the operator is to the API server here: the audit log
// keeps this user's requests alone.
const operatorUser = "cluster-network-operator"

type config struct {
	binary          string
	keepLog         string
	clusterOperator string
	nodes           int
	concurrency     int
	maxUnavailable  string
	cpuProfile      string
}

func main() {
	var c config
	flag.StringVar(&c.binary, "binary", "bin/cluster-network-operator", "the operator binary (`make build`)")
	flag.StringVar(&c.keepLog, "keep-log", "", "write the operator's log to this file and keep it (default: a temporary file, removed)")
	flag.StringVar(&c.clusterOperator, "clusteroperator-crd", "pkg/status/publish/testdata/clusteroperators-crd.yaml", "the ClusterOperator CRD to install")
	flag.IntVar(&c.nodes, "nodes", 2000, "kwok nodes")
	flag.IntVar(&c.concurrency, "concurrency", 16, "node creations in flight at once")
	flag.StringVar(&c.maxUnavailable, "max-unavailable", "10%", "the MetalLB object's speakerConfig.maxUnavailable")
	flag.StringVar(&c.cpuProfile, "cpu-profile", "", "also start the upgraded operator with --pprof-bind-address="+binarybench.PprofAddr+" and write the profile of its CPU over its first "+cpuProfileSeconds+" s to this file")
	flag.Parse()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "rollout-bench:", err)
		os.Exit(2)
	}
	binarybench.Main("rollout-bench", func(ctx context.Context) error { return run(ctx, c) })
}

func (c config) validate() error {
	switch {
	case flag.NArg() > 0:
		return fmt.Errorf("no arguments expected, got %q", flag.Args())
	case c.nodes < 1 || c.nodes > binarybench.MaxNodes || c.concurrency < 1:
		return fmt.Errorf("-nodes must be from 1 to %d, -concurrency positive", binarybench.MaxNodes)
	}
	_, err := c.allowedUnavailable()
	return err
}

// allowedUnavailable is how many speakers maxUnavailable lets be down at
// once on the nodes, rounded up as the DaemonSet controller rounds it.
func (c config) allowedUnavailable() (int, error) {
	v := intstr.Parse(c.maxUnavailable)
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, c.nodes, true)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("-max-unavailable %q: want a number of at least 1 or a percentage: %v", c.maxUnavailable, err)
	}
	return n, nil
}

func run(ctx context.Context, c config) error {
	b, logFile, stop, err := binarybench.Start(ctx, c.binary, c.keepLog, testenv.Options{Kwok: true, ControllerManager: true,
		Scheduler: true, Audit: true, AuditUsers: []string{operatorUser}})
	defer stop()
	if err != nil {
		return err
	}
	if err := setUp(ctx, b, c); err != nil {
		return err
	}
	if err := activate(ctx, b, c, logFile); err != nil {
		return err
	}
	// The DaemonSet controller alone, before the upgrade and after: one
	// rollout over 2,000 kwok nodes varied from 95 to 147 s between runs.
	var bare [2]rollout
	if bare[0], err = restartSpeakers(ctx, b, c.nodes); err != nil {
		return err
	}
	up, err := upgrade(ctx, b, c, logFile)
	if err != nil {
		return err
	}
	if bare[1], err = restartSpeakers(ctx, b, c.nodes); err != nil {
		return err
	}
	allowed, _ := c.allowedUnavailable() // validated
	return judge(up, bare, allowed)
}

// setUp adds the nodes, OpenShift's ClusterOperator API and ClusterOperator
// metallb (the cluster-version operator creates it from the release), and
// the operator's user.
func setUp(ctx context.Context, b *binarybench.Bench, c config) error {
	if err := b.AddNodes(ctx, c.nodes, c.concurrency); err != nil {
		return err
	}
	if err := installClusterOperator(ctx, b, c.clusterOperator); err != nil {
		return err
	}
	var err error
	b.OperatorKubeconfig, err = b.Env.UserKubeconfig(operatorUser)
	return err
}

// judge prints the figures and compares them with the goals: the
// upgrade's pace with the mean of the DaemonSet controller's rollouts.
func judge(up upgraded, bare [2]rollout, allowed int) error {
	fmt.Printf("operator: upgrade %s from its start to the version reported (speakers: %s from their template's change, at most %d unavailable at once);"+
		" version reported %s after the last speaker was available; %d writes; %.2f CPU-seconds (%.2f before the template's change); peak RSS %s\n",
		ms(up.took), ms(up.speakers.took), up.speakers.mostUnavailable, ms(up.versionLag), up.writes.total, up.cpu.Seconds(), up.cpuBefore.Seconds(), binarybench.MiB(up.peakRSS))
	fmt.Printf("writes by kind: %s\n", up.writes)
	alone := (bare[0].took + bare[1].took) / 2
	fmt.Printf("the DaemonSet controller alone: %s before the upgrade, %s after (mean %s), at most %d and %d unavailable at once\n",
		ms(bare[0].took), ms(bare[1].took), ms(alone), bare[0].mostUnavailable, bare[1].mostUnavailable)
	var missed *binarybench.GoalMissed
	if up.writes.total > writesGoal {
		missed = binarybench.Miss(missed, "%d writes in the upgrade, over %d", up.writes.total, writesGoal)
	}
	if up.cpu > cpuGoal {
		missed = binarybench.Miss(missed, "%.2f CPU-seconds in the upgrade, over %s", up.cpu.Seconds(), cpuGoal)
	}
	if pace := float64(up.took) / float64(alone); pace > paceGoal {
		missed = binarybench.Miss(missed, "the upgrade took %.2f times the DaemonSet controller's rollouts on average, over %.1f", pace, paceGoal)
	}
	if up.versionLag > versionLagGoal {
		missed = binarybench.Miss(missed, "the version was reported %s after the last speaker, over %s", ms(up.versionLag), versionLagGoal)
	}
	for _, r := range []rollout{up.speakers, bare[0], bare[1]} {
		if r.mostUnavailable > int64(allowed) {
			missed = binarybench.Miss(missed, "%d speakers unavailable at once, over the %d maxUnavailable allows", r.mostUnavailable, allowed)
		}
	}
	if missed != nil {
		return missed
	}
	return nil
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }
