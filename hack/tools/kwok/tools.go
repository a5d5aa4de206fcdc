//go:build tools

// Package tools pins kwok, which plays the kubelet of fake test nodes.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
