//go:build tools

// Package tools pins Helm, for the tests of a Helm install of MetalLB that
// the operator is asked to take over: its chart, as upstream ships it in the
// operand's module, installed by Helm itself.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
