package noderunner

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	Main() // a container the runner starts becomes it here
	// As root, the tests run again in a network namespace of their own, where
	// NewNetwork may make the test network; as another user they run here, and
	// those that need a Network skip.
	if code, done := Isolate(); done {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
