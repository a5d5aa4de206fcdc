package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestRecapRepeatsOnlyTheFailedTestsOwnLines(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: fine\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    pod.go:86: started\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:7: want 2, got 3\n"}`,
		`not an event`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (1.00s)\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	r := newRecorder()
	var out bytes.Buffer
	r.copy(strings.NewReader(in), &out)
	copied := out.String()
	r.recap(&out, regexp.MustCompile(`pod\.go:`))

	if want := "=== RUN   TestA\n    b_test.go:9: fine\n    pod.go:86: started\n    a_test.go:7: want 2, got 3\nnot an event\n--- FAIL: TestA (1.00s)\nFAIL\n"; copied != want {
		t.Errorf("copied:\n%s\nwant:\n%s", copied, want)
	}
	recap := strings.TrimPrefix(out.String(), copied)
	if want := "\n=== RECAP: 1 failed, each with its own output (but lines matching \"pod\\\\.go:\")\n--- p TestA\n    a_test.go:7: want 2, got 3\n--- FAIL: TestA (1.00s)\n" +
		"=== RECAP: the last 4 messages of each failed test\n--- p TestA\n    a_test.go:7: want 2, got 3\n"; recap != want {
		t.Errorf("recap:\n%s\nwant:\n%s", recap, want)
	}
}

func TestRunExitsAsTheCommandDoes(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"sh", "-c", "exit 3"}, regexp.MustCompile(""), &out); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if code := run([]string{"true"}, regexp.MustCompile(""), &out); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

func TestRecapEndsWithTheLastMessagesNotTheLogsAfterThem(t *testing.T) {
	var lines []string
	for _, output := range []string{
		"    a_test.go:1: first\n", "    a_test.go:2: " + strings.Repeat("x", 500) + "\n", "    a_test.go:3: want 2, got 3\n",
		"    a_test.go:4: third\n", "    testing.go:29: control plane logs:\n", "        --- etcd: warnings and errors ---\n",
		"        E1205 something failed\n", "--- FAIL: TestA (1.00s)\n",
	} {
		line, _ := json.Marshal(event{Action: "output", Package: "p", Test: "TestA", Output: output})
		lines = append(lines, string(line))
	}
	lines = append(lines, `{"Action":"fail","Package":"p","Test":"TestA"}`)
	r := newRecorder()
	var out bytes.Buffer
	r.copy(strings.NewReader(strings.Join(lines, "\n")), &out)
	out.Reset()
	r.recap(&out, regexp.MustCompile(`pod\.go:`))

	_, end, _ := strings.Cut(out.String(), "=== RECAP: the last 4 messages of each failed test\n")
	want := "--- p TestA\n    a_test.go:1: first\n    a_test.go:2: " + strings.Repeat("x", messageWidth-len("    a_test.go:2: ")) + " …\n" +
		"    a_test.go:3: want 2, got 3\n    a_test.go:4: third\n"
	if end != want {
		t.Errorf("the recap ends with:\n%s\nwant:\n%s", end, want)
	}
}
