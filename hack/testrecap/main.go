package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// event is what go test -json writes of a test (test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	omit := flag.String("omit", "", "a regular expression of output lines the recap leaves out")
	flag.Parse()
	omitted, err := regexp.Compile(*omit)
	if err != nil || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testrecap [-omit regexp] -- go test -json ...")
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), omitted, os.Stdout))
}

// run runs the command, copies its output to w and then recaps its failed
// tests; it returns the command's exit code.
func run(command []string, omitted *regexp.Regexp, w io.Writer) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrecap:", err)
		return 2
	}
	r := newRecorder()
	r.copy(out, w)
	err = cmd.Wait()
	r.recap(w, omitted)
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "testrecap:", err)
		return 2
	}
	return 0
}

// recorder keeps each test's output until it passes, and the order in which
// tests failed.
type recorder struct {
	lines  map[string][]string // by package and test
	failed []string
}

func newRecorder() *recorder { return &recorder{lines: map[string][]string{}} }

// copy writes the output of each event as it comes; a line that is not an
// event (go vet's, say) goes as it is.
func (r *recorder) copy(in io.Reader, w io.Writer) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var e event
		if json.Unmarshal(scanner.Bytes(), &e) != nil || e.Action == "" {
			fmt.Fprintln(w, scanner.Text())
			continue
		}
		io.WriteString(w, e.Output)
		r.record(e)
	}
}

func (r *recorder) record(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Test == "":
	case e.Action == "output":
		r.lines[key] = append(r.lines[key], e.Output)
	case e.Action == "fail":
		r.failed = append(r.failed, key)
	case e.Action == "pass" || e.Action == "skip":
		delete(r.lines, key)
	}
}

// recap writes each failed test's lines again, but those omitted and the
// "=== RUN/PAUSE/CONT/NAME" markers, and ends with each one's last messages.
func (r *recorder) recap(w io.Writer, omitted *regexp.Regexp) {
	if len(r.failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\n=== RECAP: %d failed, each with its own output (but lines matching %q)\n", len(r.failed), omitted)
	kept := map[string][]string{}
	for _, key := range r.failed {
		for _, line := range r.lines[key] {
			if !strings.HasPrefix(line, "=== ") && (omitted.String() == "" || !omitted.MatchString(line)) {
				kept[key] = append(kept[key], line)
			}
		}
		fmt.Fprintf(w, "--- %s\n%s", key, strings.Join(kept[key], ""))
	}
	fmt.Fprintf(w, "=== RECAP: the last %d messages of each failed test\n", lastMessages)
	for _, key := range r.failed {
		fmt.Fprintf(w, "--- %s\n", key)
		for _, m := range last(messages(kept[key]), lastMessages) {
			fmt.Fprintln(w, clip(m, messageWidth))
		}
	}
}

// lastMessages and messageWidth keep the recap's end short: a tool that
// shows the end of a long output must show the failure, not the control
// plane's logs a failed story prints after it.
const lastMessages, messageWidth = 4, 400

// logsFollow is a message that introduces the lines after it ("control plane
// logs:"): a failed story's cleanups print several after its failure, and
// the last messages leave them out, or they would be all there is.
var logsFollow = regexp.MustCompile(`:\s*$`)

// message is the start of a line a test wrote (t.Log, t.Error, t.Fatal):
// its file and line; a message's further lines have none.
var message = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: `)

func messages(lines []string) []string {
	var ms []string
	for _, l := range lines {
		if message.MatchString(l) && !logsFollow.MatchString(message.ReplaceAllString(l, "")) {
			ms = append(ms, strings.TrimRight(l, "\n"))
		}
	}
	return ms
}

func last(s []string, n int) []string { return s[max(0, len(s)-n):] }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}
