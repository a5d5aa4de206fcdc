//go:build tools

// Package tools pins controller-gen, which generates the API's deep-copy code and CRD.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
