// Package render turns a folder of templated manifests into Kubernetes objects.
//
// Every file of the folder is a text/template with sprig's functions. Files are
// rendered in name order, so a numeric prefix sets the order in which the
// objects come out; a file that renders to nothing is skipped, and a file may
// hold several YAML documents.
package render
