package render

import (
	"bytes"
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
	files []*template.Template // in file-name order

	// decoded remembers, per file, the last output and its objects: decoding
	// YAML costs far more than executing a template, and most files (CRDs
	// above all) render the same text every time.
	mu      sync.Mutex
	decoded []decoded
}

type decoded struct {
	text []byte
	objs []*unstructured.Unstructured
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
		tmpl, err := set.New(name).Parse(string(text))
		if err != nil {
			return nil, err // "template: dir/file:line: ..."
		}
		t.files = append(t.files, tmpl)
	}
	t.decoded = make([]decoded, len(t.files))
	if len(t.files) == 0 {
		return nil, fmt.Errorf("no templates in %s", dir)
	}
	return t, nil
}

// Render renders every template with data and returns the objects, in file
// order and in document order within a file. The objects are the caller's to
// change. It returns nothing on error.
func (t *Templates) Render(data any) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	var buf bytes.Buffer
	for i, tmpl := range t.files {
		buf.Reset()
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, err // "template: dir/file:line:col: executing ..."
		}
		fileObjs, err := t.decode(i, buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tmpl.Name(), err)
		}
		objs = append(objs, fileObjs...)
	}
	return objs, nil
}

// decode decodes the output of file i, or copies the objects decoded from the
// same output last time.
func (t *Templates) decode(i int, rendered []byte) ([]*unstructured.Unstructured, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := &t.decoded[i]
	if last.text == nil || !bytes.Equal(last.text, rendered) {
		objs, err := decode(rendered)
		if err != nil {
			return nil, err
		}
		*last = decoded{text: bytes.Clone(rendered), objs: objs}
	}
	copies := make([]*unstructured.Unstructured, len(last.objs))
	for j, o := range last.objs {
		copies[j] = o.DeepCopy()
	}
	return copies, nil
}

// decode splits rendered YAML into documents and decodes each non-empty one.
func decode(rendered []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, doc := range split(rendered) {
		if isEmpty(doc.text) {
			continue
		}
		j, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			return nil, fmt.Errorf("rendered document at line %d: %v", doc.line, err)
		}
		// Unstructured's own decoding keeps integers as int64, as the API machinery expects.
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil || obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("rendered document at line %d is not a Kubernetes object with apiVersion and kind", doc.line)
		}
		objs = append(objs, obj)
	}
	return objs, nil
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
