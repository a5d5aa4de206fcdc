package render

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Templates are the parsed templates of one folder, ready to render many times.
type Templates struct {
	names []string
	// files are the parsed templates, in file-name order; nil for a file
	// with no action, whose objects are decoded once, at Parse: a CRD's
	// text, held in its template, would cost hundreds of KiB for nothing.
	files []*template.Template

	// decoded remembers, per file, its last output's digest and objects as
	// JSON: decoding YAML costs far more than executing a template and
	// decoding JSON, and most files (CRDs above all) render the same text
	// every time. JSON, not decoded objects, because the operator holds it
	// for its life: 170 KB for the defaults, where the maps took 1.2 MB.
	mu      sync.Mutex
	decoded []*decoded
}

type decoded struct {
	sum  [sha256.Size]byte // of the output; unset for a file with no action
	docs [][]byte          // its objects, in document order
}

// Parse parses every file of dir in fsys.
func Parse(fsys fs.FS, dir string) (*Templates, error) {
	entries, err := fs.ReadDir(fsys, dir) // sorted by name
	if err != nil {
		return nil, err
	}
	t := &Templates{}
	// One set for the folder: its templates share one copy of the functions
	// (sprig's some 200, kept twice by each set) and the option.
	set := template.New(dir).Option("missingkey=error").Funcs(sprig.TxtFuncMap())
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := path.Join(dir, e.Name())
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := t.add(set, name, text); err != nil {
			return nil, err
		}
	}
	if len(t.files) == 0 {
		return nil, fmt.Errorf("no templates in %s", dir)
	}
	return t, nil
}

// add parses one file, or decodes it if it has no action.
func (t *Templates) add(set *template.Template, name string, text []byte) error {
	t.names = append(t.names, name)
	if !bytes.Contains(text, []byte("{{")) {
		docs, _, err := decode(text)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		t.files, t.decoded = append(t.files, nil), append(t.decoded, &decoded{docs: docs})
		return nil
	}
	tmpl, err := set.New(name).Parse(string(text))
	if err != nil {
		return err // "template: dir/file:line: ..."
	}
	t.files, t.decoded = append(t.files, tmpl), append(t.decoded, nil)
	return nil
}

// Render renders every template with data and returns the objects, in file
// order and in document order within a file. The objects are the caller's to
// change. It returns nothing on error.
func (t *Templates) Render(data any) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	var buf bytes.Buffer
	for i, tmpl := range t.files {
		if tmpl == nil {
			fileObjs, err := t.decoded[i].objects()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.names[i], err)
			}
			objs = append(objs, fileObjs...)
			continue
		}
		buf.Reset()
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, err // "template: dir/file:line:col: executing ..."
		}
		fileObjs, err := t.decode(i, buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.names[i], err)
		}
		objs = append(objs, fileObjs...)
	}
	return objs, nil
}

// decode decodes the output of file i, or the JSON of the objects decoded
// from the same output last time.
func (t *Templates) decode(i int, rendered []byte) ([]*unstructured.Unstructured, error) {
	sum := sha256.Sum256(rendered)
	t.mu.Lock()
	last := t.decoded[i]
	t.mu.Unlock()
	if last != nil && last.sum == sum {
		return last.objects()
	}
	docs, objs, err := decode(rendered)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.decoded[i] = &decoded{sum: sum, docs: docs}
	t.mu.Unlock()
	return objs, nil
}

// objects are new objects from the kept JSON.
func (d *decoded) objects() ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, len(d.docs))
	for j, doc := range d.docs {
		objs[j] = &unstructured.Unstructured{}
		if err := objs[j].UnmarshalJSON(doc); err != nil {
			return nil, err // decode decoded it once
		}
	}
	return objs, nil
}

// decode splits rendered YAML into documents and decodes each non-empty one,
// returning its JSON too.
func decode(rendered []byte) ([][]byte, []*unstructured.Unstructured, error) {
	var docs [][]byte
	var objs []*unstructured.Unstructured
	for _, doc := range split(rendered) {
		if isEmpty(doc.text) {
			continue
		}
		j, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			return nil, nil, fmt.Errorf("rendered document at line %d: %v", doc.line, err)
		}
		// Unstructured's own decoding keeps integers as int64, as the API machinery expects.
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil || obj.GetAPIVersion() == "" {
			return nil, nil, fmt.Errorf("rendered document at line %d is not a Kubernetes object with apiVersion and kind", doc.line)
		}
		docs, objs = append(docs, j), append(objs, obj)
	}
	return docs, objs, nil
}

type document struct {
	text []byte
	line int // where it starts in the rendered output, from 1
}

// split cuts YAML at "---" lines, keeping where each document starts so that
// errors can point into the rendered output.
func split(rendered []byte) []document {
	docs := []document{{line: 1}}
	for i, l := range bytes.SplitAfter(rendered, []byte("\n")) {
		if isSeparator(l) {
			docs = append(docs, document{line: i + 2})
			continue
		}
		last := &docs[len(docs)-1]
		last.text = append(last.text, l...)
	}
	return docs
}

func isSeparator(line []byte) bool {
	l := bytes.TrimRight(line, " \t\r\n")
	return bytes.Equal(l, []byte("---")) || bytes.HasPrefix(l, []byte("--- "))
}

// isEmpty tells whether a document holds only blank lines and comments.
func isEmpty(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}
