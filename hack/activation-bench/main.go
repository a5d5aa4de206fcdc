package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// activationGoal is issue 12's goal for the p50 of activation.
const activationGoal = 100 * time.Millisecond

type config struct {
	tries       int
	binary      string
	keepLog     string
	leaseWindow time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.tries, "tries", 20, "activations and deactivations to time")
	flag.StringVar(&c.binary, "binary", "bin/cluster-network-operator", "the operator binary (`make build`)")
	flag.StringVar(&c.keepLog, "keep-log", "", "write the operator's log to this file and keep it (default: a temporary file, removed)")
	flag.DurationVar(&c.leaseWindow, "lease-window", 60*time.Second, "how long to count the Lease's renewals with the operator idle (0 skips it)")
	flag.Parse()
	if c.tries < 1 || c.leaseWindow < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "activation-bench: -tries must be at least 1, -lease-window not negative, and no arguments")
		os.Exit(2)
	}
	binarybench.Main("activation-bench", func(ctx context.Context) error { return run(ctx, c) })
}

func run(ctx context.Context, c config) error {
	b, logFile, stop, err := binarybench.Start(ctx, c.binary, c.keepLog, testenv.Options{})
	defer stop()
	if err != nil {
		return err
	}
	if err := b.StartOperator(ctx, c.binary, logFile); err != nil {
		return err
	}
	// The API server's first object of a kind costs it a set-up of about 2 s
	// (BenchmarkActivation says the same): a pool outside MetalLB's namespace,
	// which the operator ignores, takes it outside the measure.
	if err := b.CreatePool(ctx, "default", "warm-up"); err != nil {
		return err
	}
	activations, deactivations, err := measure(ctx, b, c.tries)
	if err != nil {
		return err
	}
	fmt.Printf("activation   (%d tries): %s\n", c.tries, summary(activations))
	fmt.Printf("deactivation (%d tries): %s\n", c.tries, summary(deactivations))
	if c.leaseWindow > 0 {
		if err := printRenewals(ctx, b, c.leaseWindow); err != nil {
			return err
		}
	}
	return judge(b.Operator, activations)
}

// judge compares the figures with the goals.
func judge(op *binarybench.Operator, activations []time.Duration) error {
	var missed *binarybench.GoalMissed
	if p50 := percentile(activations, 50); p50 > activationGoal {
		missed = binarybench.Miss(missed, "activation p50 %s is over the goal of %s", ms(p50), ms(activationGoal))
	}
	lines, err := op.ThrottlingLines()
	if err != nil {
		return err
	}
	if len(lines) > 0 {
		fmt.Printf("the operator's log has %d client-side throttling lines:\n", len(lines))
		for _, l := range lines {
			fmt.Println("  " + l)
		}
		missed = binarybench.Miss(missed, "%d client-side throttling lines in the operator's log", len(lines))
	} else {
		fmt.Println("no client-side throttling in the operator's log")
	}
	if missed != nil {
		return missed
	}
	return nil
}

// percentile is the nearest-rank percentile: the smallest figure that p % of
// the figures do not exceed.
func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Sorted(slices.Values(d))
	rank := (p*len(s) + 99) / 100 // ceil(p/100 × n)
	return s[max(rank, 1)-1]
}

func summary(d []time.Duration) string {
	return fmt.Sprintf("p50 %s, p90 %s, max %s", ms(percentile(d, 50)), ms(percentile(d, 90)), ms(slices.Max(d)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
