// Command walls keeps the plan pure: it fails when one of the pure packages
// (what decides, with no client, no cache and no clock), or anything it
// imports, imports a client, a cache, a manager, a builder, client-go's rest
// or tools, or a clock. `make verify` runs it.
//
//	go run ./hack/walls                        # check
//	go run ./hack/walls -mermaid               # the package graph, as Mermaid
//	go run ./hack/walls -doc docs/architecture.md   # check that the doc's graph is current
//	go run ./hack/walls -doc docs/architecture.md -update
package main
