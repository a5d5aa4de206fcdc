package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user guide's example of kubectl metallb explain is what the plugin
// prints: the golden output the end-to-end story holds the real plugin to,
// against the real MetalLB.
func TestGuideShowsThePluginsOutput(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(root, "docs", "user-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(root, "test", "e2e", "testdata", "kubectl-metallb", "small-b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	command := "kubectl metallb explain service/small-b -n default\n```\n\n```text\n"
	_, after, ok := strings.Cut(string(guide), command)
	if !ok {
		t.Fatalf("the user guide has no block %q", command)
	}
	if shown, _, _ := strings.Cut(after, "```"); shown != string(golden) {
		t.Errorf("the user guide shows:\n%s\nthe plugin prints (test/e2e/testdata/kubectl-metallb/small-b.txt):\n%s", shown, golden)
	}
}
