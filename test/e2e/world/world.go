package world

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

// Mode says when a story's turn comes (TakeTurns), and who runs beside it.
type Mode int

const (
	// Beside runs the story side by side with the others, as many at once as
	// -test.parallel says, in the order they start.
	Beside Mode = iota
	// Long runs the story side by side, its turn before those Beside: a story
	// of a minute or more, which started last would run on alone.
	Long
	// Last runs the story once all the others have ended, beside only the
	// other stories Last: for stories whose bounds are about time, which hold
	// beside one another but not under the full load.
	Last
)

// graceBeforeTimeout is how long before this run's deadline a story's copy
// times out, so that it prints its goroutines and stops its processes
// before this run is killed.
const graceBeforeTimeout = 30 * time.Second

// Enter runs the calling story in a network world of its own: a copy of the
// test binary, in a new network namespace (noderunner.InNewWorld), runs just
// this test, and its subtests, output and outcome are mirrored here, live.
// It returns true in that copy, where the story goes on, and false here,
// where the story returns at once. When not root, there is no world to make:
// it returns true and the story runs (and skips) here.
//
//	if !world.Enter(t, world.Beside) {
//		return
//	}
//
// In the copy, the story's test network is the copy's alone
// (noderunner.World names its namespaces after the test).
func Enter(t *testing.T, mode Mode) bool {
	t.Helper()
	if noderunner.InNamedWorld() || os.Geteuid() != 0 || testing.Short() {
		return true
	}
	SideBySide(t, mode)
	name := worldName(t.Name())
	cmd, err := noderunner.InNewWorld(name, copyArgs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the story's copy in a world of its own: %v", err)
	}
	t.Logf("in world %s: a network namespace of its own, and the hosts' namespaces %s*", name, noderunner.NetnsPrefix(name))
	lines := bufio.NewReader(out)
	outcome := mirror(t, lines)
	mirror(t, lines) // what it says after its outcome: a panic, a leak
	switch err := cmd.Wait(); {
	case outcome == "":
		t.Errorf("the story's copy in its world ended (%v) before it said how the test went", err)
	case err != nil && outcome != "FAIL":
		t.Errorf("the story's copy in its world said %s, then ended with %v", outcome, err)
	}
	follow(t, outcome)
	return false
}

// worldName is the world a test runs in: its name, lower case, without
// "Test", a dash between a test and its subtest.
func worldName(test string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(test, "Test")), "/", "-")
}

// copyArgs are the flags this run was given, for the copy, which runs only
// the test t (and the subtests -test.run selects), with -test.v=test2json so
// that its output can be mirrored (it marks the lines that say a test runs or
// ended, and says each subtest's outcome when it ends), and times out before
// this run does.
func copyArgs(t *testing.T) []string {
	args := []string{"-test.v=test2json", "-test.count=1", "-test.run=" + runPattern(t.Name(), flag.Lookup("test.run").Value.String())}
	if deadline, ok := t.Deadline(); ok {
		args = append(args, fmt.Sprintf("-test.timeout=%s", max(time.Until(deadline)-graceBeforeTimeout, time.Second)))
	}
	owned := map[string]bool{"test.v": true, "test.count": true, "test.run": true, "test.timeout": true,
		"test.testlogfile": true, "test.list": true, "test.shuffle": true, "test.outputdir": true,
		"test.coverprofile": true, "test.gocoverdir": true, "test.cpuprofile": true, "test.memprofile": true,
		"test.blockprofile": true, "test.mutexprofile": true, "test.trace": true}
	flag.Visit(func(f *flag.Flag) {
		if !owned[f.Name] {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// runPattern is -test.run for the copy: exactly the test (and the tests
// above it), then what each alternative of this run's pattern that selects
// the test says of its subtests.
func runPattern(test, pattern string) string {
	names := strings.Split(test, "/")
	var exact []string
	for _, name := range names {
		exact = append(exact, "^"+regexp.QuoteMeta(name)+"$")
	}
	var alternatives []string
	for _, levels := range splitPattern(pattern) {
		if selects(levels, names) {
			alternatives = append(alternatives, strings.Join(append(exact, levels[min(len(exact), len(levels)):]...), "/"))
		}
	}
	if len(alternatives) == 0 { // only a test this run selected enters a world
		return strings.Join(exact, "/")
	}
	return strings.Join(alternatives, "|")
}

// selects tells whether a pattern's levels select the test of these names
// (the levels past the names select its subtests).
func selects(levels, names []string) bool {
	for i, name := range names[:min(len(names), len(levels))] {
		if ok, _ := regexp.MatchString(levels[i], name); !ok {
			return false
		}
	}
	return true
}

// splitPattern splits a -test.run pattern as the testing package does: into
// alternatives at the bars, and each into its levels at the slashes, both
// outside brackets and parentheses.
func splitPattern(pattern string) [][]string {
	var alternatives [][]string
	var levels []string
	brackets, parens := 0, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '[':
			brackets++
		case c == ']':
			brackets = max(brackets-1, 0) // an unmatched ']' is legal
		case c == '(' && brackets == 0:
			parens++
		case c == ')' && brackets == 0:
			parens--
		case c == '\\':
			i++
		case (c == '/' || c == '|') && brackets == 0 && parens == 0:
			levels = append(levels, pattern[:i])
			if c == '|' {
				alternatives, levels = append(alternatives, levels), nil
			}
			pattern, i = pattern[i+1:], -1
		}
	}
	return append(alternatives, append(levels, pattern))
}

// mirror copies the output of the copy's test t.Name() into t's, until its
// outcome line, and runs each subtest the copy runs as a subtest of t. It
// returns the outcome: PASS, FAIL, SKIP, or "" when the output ended first.
func mirror(t *testing.T, out *bufio.Reader) string {
	for {
		line, err := out.ReadString('\n')
		if line != "" {
			if outcome := mirrorLine(t, out, line); outcome != "" {
				return outcome
			}
		}
		if err != nil {
			return ""
		}
	}
}

// marker starts the lines of -test.v=test2json output that say a test runs
// or ended.
const marker = "\x16"

// mirrorLine mirrors one line of the copy's output into t's and returns the
// outcome of t when the line says it.
func mirrorLine(t *testing.T, out *bufio.Reader, line string) string {
	if !strings.HasPrefix(line, marker) {
		_, _ = io.WriteString(t.Output(), strings.TrimPrefix(line, "    "))
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, marker))
	switch {
	case len(fields) == 3 && fields[0] == "===" && fields[1] == "RUN" && strings.HasPrefix(fields[2], t.Name()+"/"):
		t.Run(strings.TrimPrefix(fields[2], t.Name()+"/"), func(t *testing.T) { follow(t, mirror(t, out)) })
	case len(fields) >= 3 && fields[0] == "---" && fields[2] == t.Name():
		return strings.TrimSuffix(fields[1], ":")
	}
	// RUN of this test, PAUSE, CONT and NAME: this side says its own; the
	// outcomes of the tests above this one, when it is a subtest; the copy's
	// summary (PASS, FAIL): this run prints its own.
	return ""
}

// follow gives t the outcome its copy had.
func follow(t *testing.T, outcome string) {
	switch outcome {
	case "FAIL":
		t.Fail()
	case "SKIP":
		t.SkipNow()
	}
}
