// Command testrecap runs go test with -json, writes the tests' output as -v
// would, and ends it with each failed test's own lines again: among stories
// that run side by side, a failure's message is printed when it happens, often
// thousands of lines before the end of the output, where CI's excerpt and a
// reader look. Lines matching -omit (a story's pod log, say) are left out of
// the recap, not of the output. It exits as go test does.
//
//	go run ./hack/testrecap -omit 'pod\.go:' -- go test -json ./test/e2e/...
package main
