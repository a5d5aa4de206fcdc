package bindata

import "embed"

// FS holds the folders of templates, such as "metallb", and "alerts", the
// operands' alert rules as Prometheus rules files.
//
//go:embed metallb alerts
var FS embed.FS
