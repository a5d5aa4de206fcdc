package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// print writes a result as JSON, YAML, or as text by the printer's function.
func (o *options) print(v any, text func(*printer)) error {
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = o.out.Write(b)
		return err
	}
	p := &printer{w: tabwriter.NewWriter(o.out, 0, 4, 2, ' ', 0), color: o.colored()}
	text(p)
	return p.w.Flush()
}

// colored tells whether the text is coloured: always, never, or on a
// terminal.
func (o *options) colored() bool {
	switch o.color {
	case "always":
		return true
	case "never":
		return false
	}
	f, ok := o.out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}

// printer writes text in aligned columns, coloured or not.
type printer struct {
	w     *tabwriter.Writer
	color bool
}

// Colours of what the text says.
const (
	good = "32" // green
	bad  = "31" // red
	warn = "33" // yellow
)

func (p *printer) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) line(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// field writes a label and its value, the value in a column of its own.
func (p *printer) field(label, value string) {
	p.line("  %s:\t%s", label, value)
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	return strings.Join(items, ", ")
}
