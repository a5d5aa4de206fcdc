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

const (
	// isolatedEnv marks a program that runs in its own network namespace.
	isolatedEnv = "NODERUNNER_ISOLATED"
	// worldEnv names the world a program makes its test network in.
	worldEnv = "NODERUNNER_WORLD"
	// defaultWorld is the world of a program started in none (hack/demo).
	defaultWorld = "main"
)

// World is the name of this program's network world: a network namespace of
// its own, where it makes its test network, whose hosts' namespaces (named
// in /run/netns, which all share) have names that start with its name.
// Worlds side by side each have a bridge and the same addresses.
func World() string {
	if InNamedWorld() {
		return os.Getenv(worldEnv)
	}
	return defaultWorld
}

// InNamedWorld says whether this program was started by InNewWorld with a
// world's name, as the copy of a test binary that runs one story.
func InNamedWorld() bool { return os.Getenv(worldEnv) != "" }

// netnsName is the name of the namespace of a host of this world.
func netnsName(host string) string { return NetnsPrefix(World()) + host }

// NetnsPrefix starts the names of the namespaces of the hosts of a world.
func NetnsPrefix(world string) string { return prefix + world + "-" }

// InNewWorld returns a command that runs this program again, with args, in a
// network world of its own named world (World; "" keeps this program's name),
// killed if this program dies.
func InNewWorld(world string, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	if world != "" {
		cmd.Env = append(cmd.Env, worldEnv+"="+world)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

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
	cmd, err := InNewWorld("", os.Args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noderunner:", err)
		return 1, true
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
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
