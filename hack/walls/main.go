package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

const module = "github.com/bmlb/cluster-network-operator/"

// pure are the packages that decide: they import no client.
var pure = []string{
	"pkg/apis/metallb/v1beta1",
	"pkg/crdvalidation",
	"pkg/network/metallb/explain",
	"pkg/network/metallb/maintenance/decide",
	"pkg/network/metallb/manifests",
	"pkg/network/metallb/nodeaddress/decide",
	"pkg/network/metallb/plan",
	"pkg/network/metallb/release",
	"pkg/objects",
	"pkg/render",
	"pkg/status",
	"pkg/tlsprofile",
}

// forbidden are what a pure package must not reach.
var forbidden = regexp.MustCompile(`^(sigs\.k8s\.io/controller-runtime/pkg/(client|cache|manager|builder)|k8s\.io/client-go/(rest|tools)|k8s\.io/utils/clock)(/|$)`)

func main() {
	mermaid := flag.Bool("mermaid", false, "print the package graph as Mermaid")
	doc := flag.String("doc", "", "check that this Markdown file holds the current graph")
	update := flag.Bool("update", false, "with -doc, write the current graph into the file")
	flag.Parse()
	pkgs, err := list()
	if err == nil {
		switch {
		case *mermaid:
			fmt.Print(graph(pkgs))
		case *doc != "":
			err = checkDoc(*doc, pkgs, *update)
		default:
			err = check(pkgs)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "walls:", err)
		os.Exit(1)
	}
}

// pkg is what go list tells of a package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list lists the module's packages and all they depend on, with their
// imports and dependencies.
func list() (map[string]pkg, error) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs[p.ImportPath] = p
	}
}

// check fails, naming each path, when a pure package reaches a forbidden one.
func check(pkgs map[string]pkg) error {
	var problems []string
	for _, name := range pure {
		p, ok := pkgs[module+name]
		if !ok {
			return fmt.Errorf("pure package %s does not exist: update the list in hack/walls", name)
		}
		for _, dep := range p.Deps {
			if !forbidden.MatchString(dep) {
				continue
			}
			// Only where the walls are breached: what lies beyond a forbidden
			// package is its.
			chain := path(pkgs, p.ImportPath, dep)
			if !slices.ContainsFunc(chain[:len(chain)-1], forbidden.MatchString) {
				problems = append(problems, fmt.Sprintf("%s reaches %s: %s", name, dep, strings.Join(chain, " -> ")))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("pure packages reach a client, a cache or a clock:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// path is the shortest chain of imports from one package to another.
func path(pkgs map[string]pkg, from, to string) []string {
	seen := map[string]bool{from: true}
	prev := map[string]string{}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var chain []string
			for c := to; c != from; c = prev[c] {
				chain = append(chain, c)
			}
			chain = append(chain, from)
			slices.Reverse(chain)
			return chain
		}
		for _, next := range pkgs[cur].Imports {
			if !seen[next] {
				seen[next], prev[next] = true, cur
				queue = append(queue, next)
			}
		}
	}
	return []string{from, "...", to}
}
