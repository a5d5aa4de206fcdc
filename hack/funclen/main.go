package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	limit := flag.Int("max", 60, "the most lines a function may have")
	flag.Parse()
	fset := token.NewFileSet()
	long := 0
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "vendor" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			n, err := report(fset, path, *limit)
			long += n
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if long > 0 {
		fmt.Printf("%d functions are longer than %d lines\n", long, *limit)
		os.Exit(1)
	}
}

// report prints the functions of one file over limit lines and counts them.
// Generated files (controller-gen's deep copies) are their generator's to
// shape, not ours.
func report(fset *token.FileSet, path string, limit int) (int, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil || ast.IsGenerated(f) {
		return 0, err
	}
	n := 0
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		if lines := end.Line - start.Line + 1; lines > limit {
			fmt.Printf("%s:%d: %s has %d lines\n", path, start.Line, fn.Name.Name, lines)
			n++
		}
	}
	return n, nil
}
