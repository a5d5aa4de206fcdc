package render

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestRenderInFileOrderSkippingEmptyOutput(t *testing.T) {
	fsys := fstest.MapFS{
		"m/20-two.yaml": {Data: []byte(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name | upper }}-b
---
# a comment only
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
`)},
		"m/10-one.yaml":     {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Name }}\n")},
		"m/15-off.yaml":     {Data: []byte("{{ if .Enabled }}apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n{{ end }}")},
		"other/99-x.yaml":   {Data: []byte("not: rendered")},
		"m/sub/ignored.txt": {Data: []byte("not a template of m")},
	}
	tmpl, err := Parse(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tmpl.Render(map[string]any{"Name": "demo", "Enabled": false})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	want := "Namespace/demo ConfigMap/DEMO-b ConfigMap/c"
	if strings.Join(got, " ") != want {
		t.Errorf("rendered %v, want %s", got, want)
	}
}

func TestRenderErrorsNameTheFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		want             string
	}{
		{"parse error", "m/01-a.yaml", "kind: x\n{{ if }}\n", "m/01-a.yaml:2"},
		{"missing key", "m/01-a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Missing }}\n", "m/01-a.yaml:4"},
		{"bad yaml", "m/02-b.yaml", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\n kind: [\n", "m/02-b.yaml: rendered document at line 4"},
		{"no kind", "m/03-c.yaml", "metadata:\n  name: x\n", "m/03-c.yaml: rendered document at line 1 is not a Kubernetes object with apiVersion and kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(fstest.MapFS{tc.file: {Data: []byte(tc.data)}}, "m")
			if err == nil {
				_, err = tmpl.Render(map[string]any{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v does not name %q", err, tc.want)
			}
		})
	}
}

func TestRenderKeepsIntegersAsInt64(t *testing.T) {
	tmpl, err := Parse(fstest.MapFS{"m/1.yaml": {Data: []byte("apiVersion: v1\nkind: Pod\nspec:\n  priority: 7\n")}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tmpl.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := objs[0].Object["spec"].(map[string]any)["priority"]; p != int64(7) {
		t.Errorf("priority decoded as %T %v, want int64 7", p, p)
	}
}

func TestRenderReturnsNothingOnError(t *testing.T) {
	fsys := fstest.MapFS{
		"m/1.yaml": {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n")},
		"m/2.yaml": {Data: []byte("{{ .Missing }}")},
	}
	tmpl, err := Parse(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tmpl.Render(map[string]any{})
	if err == nil || objs != nil {
		t.Errorf("got %d objects and error %v; want none and an error", len(objs), err)
	}
}

func TestParseRefusesAnEmptyFolder(t *testing.T) {
	if _, err := Parse(fstest.MapFS{"m/sub/x.yaml": {}}, "m"); err == nil {
		t.Error("Parse accepted a folder without templates")
	}
}

func TestRenderedObjectsAreTheCallers(t *testing.T) {
	tmpl, err := Parse(fstest.MapFS{"m/1.yaml": {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n")}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	first, err := tmpl.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	first[0].SetLabels(map[string]string{"changed": "by the caller"})
	second, err := tmpl.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	if second[0].GetLabels() != nil {
		t.Errorf("a second render returned the first caller's change: %v", second[0].GetLabels())
	}
}
