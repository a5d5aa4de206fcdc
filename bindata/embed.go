// Package bindata holds the operator's templated manifests, embedded in the
// binary so that it needs no files on disk: one folder per operand.
package bindata

import "embed"

// FS holds the folders of templates, such as "metallb".
//
//go:embed metallb
var FS embed.FS
