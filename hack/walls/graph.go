package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// clientNode stands for every forbidden package in the graph.
const clientNode = "client"

// graph is the module's packages under cmd/ and pkg/ and what they import of
// each other, as Mermaid: pure packages in one style, and one node for the
// client, the cache, the manager and the clock, with an arrow from each
// package that imports one of them.
func graph(pkgs map[string]pkg) string {
	var names []string
	for name := range pkgs {
		if short, ours := strings.CutPrefix(name, module); ours && (strings.HasPrefix(short, "pkg/") || strings.HasPrefix(short, "cmd/")) {
			names = append(names, short)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("graph LR\n")
	fmt.Fprintf(&b, "  %s[\"controller-runtime client, cache, manager, builder; client-go rest, tools; clock\"]\n", clientNode)
	for _, name := range names {
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id(name), name)
	}
	for _, name := range names {
		var edges []string
		usesClient := false
		for _, imp := range pkgs[module+name].Imports {
			if short, ok := strings.CutPrefix(imp, module); ok && slices.Contains(names, short) {
				edges = append(edges, id(short))
			}
			usesClient = usesClient || forbidden.MatchString(imp)
		}
		if usesClient {
			edges = append(edges, clientNode)
		}
		for _, e := range edges {
			fmt.Fprintf(&b, "  %s --> %s\n", id(name), e)
		}
	}
	var pureIDs []string
	for _, name := range pure {
		pureIDs = append(pureIDs, id(name))
	}
	b.WriteString("  classDef pure fill:#d5f5d5,stroke:#2a7a2a\n")
	b.WriteString("  classDef client fill:#f5d5d5,stroke:#7a2a2a\n")
	fmt.Fprintf(&b, "  class %s pure\n", strings.Join(pureIDs, ","))
	fmt.Fprintf(&b, "  class %s client\n", clientNode)
	return b.String()
}

func id(name string) string {
	return strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(name)
}

// The doc holds the graph between these lines.
const (
	begin = "```mermaid\n"
	end   = "```\n"
)

// checkDoc fails when the doc's Mermaid block is not the graph, or writes it,
// and when its table of packages does not name every package of the module.
func checkDoc(file string, pkgs map[string]pkg, update bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	doc := string(data)
	if err := checkTable(file, doc, pkgs); err != nil {
		return err
	}
	graph := graph(pkgs)
	i := strings.Index(doc, begin)
	if i < 0 {
		return fmt.Errorf("%s holds no %q block", file, strings.TrimSpace(begin))
	}
	j := strings.Index(doc[i+len(begin):], end)
	if j < 0 {
		return fmt.Errorf("%s: the mermaid block does not end", file)
	}
	current := doc[i+len(begin) : i+len(begin)+j]
	if current == graph {
		return nil
	}
	if !update {
		return fmt.Errorf("the package graph in %s is stale: go run ./hack/walls -doc %s -update", file, file)
	}
	return os.WriteFile(file, []byte(doc[:i+len(begin)]+graph+doc[i+len(begin)+j:]), 0o644)
}

// tableRow is a row of the doc's table of packages: "| `pkg/apply` | ...".
var tableRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

// checkTable fails when the doc's table of packages and go list disagree.
func checkTable(file, doc string, pkgs map[string]pkg) error {
	listed := map[string]bool{}
	for _, m := range tableRow.FindAllStringSubmatch(doc, -1) {
		listed[m[1]] = true
	}
	var missing, extra []string
	for name := range pkgs {
		if short, ours := strings.CutPrefix(name, module); ours && !listed[short] {
			missing = append(missing, short)
		}
	}
	for name := range listed {
		if _, ok := pkgs[module+name]; !ok {
			extra = append(extra, name)
		}
	}
	if len(missing)+len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		return fmt.Errorf("%s's table of packages is not go list ./...: missing %v, not packages %v", file, missing, extra)
	}
	return nil
}
