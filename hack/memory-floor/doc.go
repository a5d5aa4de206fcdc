// Command memory-floor measures what the operator's stack costs before the
// operator does anything: the resident set of a binary whose packages are
// initialized and which has read nothing, its API server a closed port. It
// builds and measures two floors, then the operator binary:
//
//   - manager: a controller-runtime manager alone;
//   - templates: the same with text/template and sprig, which the operator
//     renders MetalLB's manifests with, linked in;
//   - the operator (`start`, the install manifests' environment), measured
//     when it logs that it is waiting for the API server.
//
// Each is started -tries times and its median printed. It exits 2 when it
// could not measure; it has no goal of its own.
//
//	make build && go run ./hack/memory-floor -binary bin/cluster-network-operator
package main
