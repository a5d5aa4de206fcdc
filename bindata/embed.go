package bindata

import "embed"

// FS holds the folders of templates, such as "metallb".
//
//go:embed metallb
var FS embed.FS
