package noderunner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

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

// Get asks http://addr/ (addr is host:port) over HTTP from the host's
// namespace and returns the body; an error when no answer came within timeout.
func (h *Host) Get(addr string, timeout time.Duration) (string, error) {
	var conn net.Conn
	err := inNetns(h.Netns, func() error {
		// Dialled on this thread, the connection's socket is the namespace's.
		var err error
		conn, err = (&net.Dialer{Timeout: timeout}).Dial("tcp", addr)
		return err
	})
	if err != nil {
		return "", err
	}
	transport := &http.Transport{DisableKeepAlives: true,
		DialContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil }}
	client := &http.Client{Transport: transport, Timeout: timeout}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET http://%s/: %s", addr, resp.Status)
	}
	return string(body), err
}
