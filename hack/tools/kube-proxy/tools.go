//go:build tools

// Package tools pins kube-proxy, which the node-address stories run in each
// node's network namespace (iptables mode) to carry the traffic. It is a group
// of its own so that the control plane's folder, already built, stays valid.
package tools

import _ "k8s.io/kubernetes/cmd/kube-proxy"
