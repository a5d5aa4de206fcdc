#!/usr/bin/env bash
# Fails when vendor/ differs from what `go mod vendor` makes of go.mod and go.sum.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOFLAGS=-mod=mod go mod vendor -o "$tmp/vendor"
if ! diff -r -q vendor "$tmp/vendor"; then
  echo "vendor/ is out of date: run 'go mod vendor'" >&2
  exit 1
fi
