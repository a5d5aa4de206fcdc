package binarybench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// stopGrace is how long the operator may take to stop on SIGTERM before it is
// killed: its own graceful-shutdown timeout (30 s) and a little more.
const stopGrace = 35 * time.Second

// ReleaseVersion is what the operator reports as its release, as the install
// manifests' Deployment sets it.
const ReleaseVersion = "0.0.1-snapshot"

// Operator is the operator binary running as a child process.
type Operator struct {
	// Log is the file holding the operator's standard output and error.
	Log string

	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // how it exited, valid once done is closed
}

// OperatorEnv is the environment of the operator's Deployment in manifests/:
// the release and MetalLB's images at the version the templates follow.
func OperatorEnv() []string {
	return []string{
		manifests.ReleaseVersionEnv + "=" + ReleaseVersion,
		manifests.ControllerImageEnv + "=quay.io/metallb/controller:" + release.MetalLB,
		manifests.SpeakerImageEnv + "=quay.io/metallb/speaker:" + release.MetalLB,
	}
}

// portsFree fails when a port the operator's default flags bind is taken:
// another process answering there would pass for the operator.
func portsFree(addrs []string) error {
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("the operator's default flags bind %s, which is taken: %v", addr, err)
		}
		l.Close()
	}
	return nil
}

// startOperator runs `binary start --kubeconfig=kubeconfig` and the flags,
// every other flag at its default, with OperatorEnv and environ, its output in
// logFile.
func startOperator(binary, kubeconfig, logFile string, flags, environ []string) (*Operator, error) {
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(binary, append([]string{"start", "--kubeconfig=" + kubeconfig}, flags...)...)
	cmd.Env = slices.Concat(os.Environ(), OperatorEnv(), environ) // the last of a name wins
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own: Ctrl-C reaches this program, which stops the
	// operator before the control plane; and it dies with this program.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := testenv.Spawn(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %v", binary, err)
	}
	op := &Operator{Log: logFile, cmd: cmd, done: make(chan struct{})}
	go func() {
		op.err = cmd.Wait()
		close(op.done)
	}()
	return op, nil
}

// PID is the operator's process id.
func (o *Operator) PID() int { return o.cmd.Process.Pid }

// Exited is closed when the operator has exited.
func (o *Operator) Exited() <-chan struct{} { return o.done }

// ExitError says how the operator exited, once Exited is closed.
func (o *Operator) ExitError() error { return o.err }

// Stop sends SIGTERM, and SIGKILL when the operator has not exited within
// stopGrace. It returns how the operator ended; stopping it twice is harmless.
func (o *Operator) Stop() error {
	select {
	case <-o.done:
		return o.err
	default:
	}
	_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-o.done:
		return o.err
	case <-time.After(stopGrace):
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		<-o.done
		return fmt.Errorf("did not stop within %s of SIGTERM: killed", stopGrace)
	}
}

// throttlingMarks are what client-go's rate limiter logs when a request
// waited over a second for it: "Waited before sending request" with the
// reason "client-side throttling, not priority and fairness" today, "Waited
// for ... due to client-side throttling" in older releases.
var throttlingMarks = []string{"client-side throttling", "Waited for", "Waited before sending request"}

// ThrottlingLines returns the lines of the operator's log that say a request
// waited for the client's rate limiter.
func (o *Operator) ThrottlingLines() ([]string, error) {
	f, err := os.Open(o.Log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64*1024), 4*1024*1024) // a log line can hold a whole object
	for scanner.Scan() {
		for _, mark := range throttlingMarks {
			if strings.Contains(scanner.Text(), mark) {
				found = append(found, scanner.Text())
				break
			}
		}
	}
	return found, scanner.Err()
}

// Tail returns the last lines of the operator's log, for error messages.
func (o *Operator) Tail(lines int) string { return testenv.TailFile(o.Log, lines) }
