// Command funclen lists the functions longer than a limit, from the line of
// their func keyword to that of their closing brace, in the Go files under the
// folders given (vendor/ and testdata/ left out). It exits 1 when it lists any.
//
//	go run ./hack/funclen -max 60 pkg
package main
