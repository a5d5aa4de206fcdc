//go:build tools

// Package tools pins etcd, the store behind the test kube-apiserver.
package tools

import _ "go.etcd.io/etcd/server/v3"
