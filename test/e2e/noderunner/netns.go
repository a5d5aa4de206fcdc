package noderunner

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps the named network namespaces.
const netnsDir = "/run/netns"

func netnsPath(name string) string { return filepath.Join(netnsDir, name) }

// inNetns runs fn on an OS thread that has entered the named network namespace:
// sockets fn opens belong to it and stay there when used from other threads.
func inNetns(name string, fn func() error) error {
	runtime.LockOSThread()
	own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer own.Close()
	target, err := os.Open(netnsPath(name))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %v", name, err)
	}
	fnErr := fn()
	// A thread that cannot go back stays locked, so Go ends it with the goroutine
	// instead of handing it to other code.
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err == nil {
		runtime.UnlockOSThread()
	}
	return fnErr
}
