// Package docs holds README.md and docs/*.md to the code.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

// root is the repository, from this package's folder.
const root = "../.."

// The MetalLB and frr-k8s releases README.md and docs/*.md name, in examples
// and in measured figures, are the releases of pkg/network/metallb/release:
// MetalLB's or the previous one, frr-k8s's. A release bump fails here on
// every line to revisit. A version is MetalLB's unless the word before it
// names frr-k8s, or another tool pinned under hack/tools ("etcd", "helm"),
// whose versions this test leaves alone.
func TestDocsNameTheReleases(t *testing.T) {
	others, err := otherTools()
	if err != nil {
		t.Fatal(err)
	}
	mentions, err := versionMentions()
	if err != nil {
		t.Fatal(err)
	}
	metallb := 0
	for _, m := range mentions {
		switch {
		case strings.Contains(m.word, "frr-k8s"):
			if m.version != release.FRRK8s {
				t.Errorf("%s names frr-k8s %s; its release is %s (release.FRRK8s)", m.at, m.version, release.FRRK8s)
			}
		case others[m.word]:
		default:
			metallb++
			if m.version != release.MetalLB && m.version != release.PreviousMetalLB {
				t.Errorf("%s names MetalLB %s; its release is %s (release.MetalLB), the previous %s (release.PreviousMetalLB)",
					m.at, m.version, release.MetalLB, release.PreviousMetalLB)
			}
		}
	}
	if metallb == 0 {
		t.Error("the docs name no MetalLB release: the test no longer finds them")
	}
}

// versionInDocs is a release as the docs write one, "v" and numbers, with a
// suffix such as "-1", not inside a word or a longer version.
var versionInDocs = regexp.MustCompile(`(?:^|[^0-9A-Za-z.])(v\d+\.\d+(?:\.\d+)?(?:-\w+)?)`)

// mention is a version a doc names, where, and the word before it.
type mention struct{ at, word, version string }

// versionMentions finds every version in README.md and docs/*.md.
func versionMentions() ([]mention, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var mentions []mention
	for _, file := range append([]string{filepath.Join(root, "README.md")}, files...) {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		name, _ := filepath.Rel(root, file)
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range versionInDocs.FindAllStringSubmatchIndex(line, -1) {
				mentions = append(mentions, mention{at: name + ":" + strconv.Itoa(i+1),
					word: wordBefore(line[:m[2]]), version: line[m[2]:m[3]]})
			}
		}
	}
	return mentions, nil
}

// wordBefore is the last word of text, in lower case, without the
// punctuation that opens it: "| etcd " gives "etcd", "(quay.io/metallb/frr-k8s:"
// gives "quay.io/metallb/frr-k8s:".
func wordBefore(text string) string {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return ""
	}
	return strings.ToLower(strings.TrimLeft(fields[len(fields)-1], "`*_([\"'|"))
}

// otherTools are the tools pinned under hack/tools other than MetalLB and
// frr-k8s, by the names the docs give them.
func otherTools() (map[string]bool, error) {
	entries, err := os.ReadDir(filepath.Join(root, "hack", "tools"))
	if err != nil {
		return nil, err
	}
	others := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "metallb") && e.Name() != "frr-k8s" {
			others[e.Name()] = true
		}
	}
	return others, nil
}
