//go:build tools

// Package tools pins prometheus-operator for its CRD files (ServiceMonitor,
// PodMonitor, PrometheusRule), which hack/tools.sh copies out of the module:
// nothing of it is built. versionutil is its lightest package, imported only
// so that `go mod tidy` keeps the requirement.
package tools

import _ "github.com/prometheus-operator/prometheus-operator/pkg/versionutil"
