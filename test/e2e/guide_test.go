package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

const userGuide = "../../docs/user-guide.md"

var (
	yamlBlock  = regexp.MustCompile("(?s)```yaml\n(.*?)```")
	shellBlock = regexp.MustCompile("(?s)```sh\n# example: (\\S+)\n(.*?)```")
)

// guideExamples returns the user guide's YAML examples by name: each block
// starts with "# example: <name>".
func guideExamples(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(userGuide)
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]string{}
	for _, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
		first, _, _ := strings.Cut(m[1], "\n")
		name, ok := strings.CutPrefix(first, "# example: ")
		if !ok {
			t.Fatalf("a YAML block of the user guide does not start with '# example: <name>':\n%s", m[1])
		}
		examples[name] = m[1]
	}
	if len(examples) == 0 {
		t.Fatal("the user guide has no YAML example")
	}
	return examples
}

// guideExample writes one of the guide's examples to a file, for kubectl.
func guideExample(t *testing.T, name string) string {
	t.Helper()
	example, ok := guideExamples(t)[name]
	if !ok {
		t.Fatalf("the user guide has no example %q", name)
	}
	file := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(file, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// guideCommands returns the commands of one of the guide's shell examples (a
// block that starts with "# example: <name>"), one per line, split into
// their words: the examples hold no quoting.
func guideCommands(t *testing.T, name string) [][]string {
	t.Helper()
	data, err := os.ReadFile(userGuide)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range shellBlock.FindAllStringSubmatch(string(data), -1) {
		if m[1] != name {
			continue
		}
		var commands [][]string
		for _, line := range strings.Split(strings.TrimSpace(m[2]), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				commands = append(commands, strings.Fields(line))
			}
		}
		return commands
	}
	t.Fatalf("the user guide has no shell example %q", name)
	return nil
}

// Every YAML example of the user guide passes the API server's validation,
// MetalLB's CRDs and ours installed. (The installation test also runs the
// activate and tune examples for real.)
func TestUserGuideExamples(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, metallbNamespace)
	// Every CRD the operator may render: MetalLB's, and frr-k8s's.
	for _, crd := range rendered(t, v1beta1.BGPBackendFRRK8s, "CustomResourceDefinition") {
		data, err := json.Marshal(crd.Object)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, env, "apply", "--server-side", "-f", writeTemp(t, string(data)))
	}
	kubectl(t, env, "wait", "--for=condition=Established", "--all", "crd")
	for name := range guideExamples(t) {
		t.Run(name, func(t *testing.T) {
			t.Logf("%s", kubectl(t, env, "apply", "--dry-run=server", "-f", guideExample(t, name)))
		})
	}
}
