package binarybench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of the benchmark programs.
const (
	exitGoalMissed = 1 // measured, and a goal was missed
	exitFailed     = 2 // nothing to compare with a goal: the benchmark could not run
)

// GoalMissed is the error of a benchmark that measured, and found a figure
// worse than its goal.
type GoalMissed struct{ Reasons []string }

func (g *GoalMissed) Error() string {
	s := "goal missed:"
	for _, r := range g.Reasons {
		s += "\n  " + r
	}
	return s
}

// Miss adds a reason to a GoalMissed, creating it on the first.
func Miss(g *GoalMissed, format string, args ...any) *GoalMissed {
	if g == nil {
		g = &GoalMissed{}
	}
	g.Reasons = append(g.Reasons, fmt.Sprintf(format, args...))
	return g
}

// Main runs a benchmark and exits: 0 when every goal was met, 1 when one was
// missed, 2 when it could not measure. Ctrl-C or SIGTERM cancels run's
// context, so that run stops what it started before Main exits; a second one
// ends the program at once (its children die with it: parent-death signal).
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the next signal has its default effect
	}()
	err := run(ctx)
	interrupted := ctx.Err() != nil
	stop()
	var missed *GoalMissed
	switch {
	case interrupted:
		fmt.Fprintf(os.Stderr, "%s: interrupted; everything it started is stopped\n", name)
		os.Exit(exitFailed)
	case err == nil:
		fmt.Printf("%s: every goal met\n", name)
	case errors.As(err, &missed):
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(exitGoalMissed)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(exitFailed)
	}
}

// LogFile is where the operator's log goes: keep when it is named, else a
// temporary file; the function returned removes a temporary one.
func LogFile(keep string) (string, func(), error) {
	if keep != "" {
		return keep, func() {}, nil
	}
	f, err := os.CreateTemp("", "cno-bench-operator-*.log")
	if err != nil {
		return "", nil, err
	}
	f.Close()
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}
