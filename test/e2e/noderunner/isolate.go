package noderunner

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// isolatedEnv marks a program that runs in its own network namespace.
const isolatedEnv = "NODERUNNER_ISOLATED"

// Isolate runs this program again in a network namespace of its own, where the
// test network (its bridge, addresses and routes) cannot meet the machine's
// own: the machine may itself be on 192.0.2.0/24, and nothing sent in the
// tests can leave it. It returns the copy's exit code and true once the copy
// ran; false when the caller is the copy, or is not root (the stories that
// need a Network then skip).
func Isolate() (int, bool) {
	if os.Getenv(isolatedEnv) != "" {
		// The copy: a new network namespace starts with its loopback down.
		if err := ip("link", "set", "lo", "up"); err != nil {
			fmt.Fprintln(os.Stderr, "noderunner:", err)
			return 1, true
		}
		return 0, false
	}
	if os.Geteuid() != 0 {
		return 0, false
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "noderunner:", err)
		return 1, true
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "noderunner: a network namespace for the tests:", err)
		return 1, true
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode(), true
}

// isolated checks that this program is the copy, in a network namespace with
// nothing but the test network.
func isolated() error {
	if os.Getenv(isolatedEnv) == "" {
		return fmt.Errorf("the test network is only made in a network namespace of its own: call noderunner.Isolate first thing in TestMain (or main)")
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifaces {
		if i.Name != "lo" && !strings.HasPrefix(i.Name, prefix) {
			return fmt.Errorf("this network namespace has interface %s: the test network is only made in one of its own", i.Name)
		}
	}
	return nil
}
