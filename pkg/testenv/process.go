package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a component that envtest does not run (kube-controller-manager,
// kube-scheduler, kwok), its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	started time.Time
	done    chan struct{} // closed when the process has exited and been reaped
	err     error         // how it exited, valid once done is closed
}

// startProcess starts a binary with its output in dir/name.log.
//
// The process is its own process group, so a Ctrl-C at the terminal reaches the
// test (which then stops the environment in order) and not the components, and
// it is killed if the test process dies without cleaning up (parent-death signal).
func startProcess(dir, name, binary string, args ...string) (*process, error) {
	logFile := filepath.Join(dir, name+".log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := Spawn(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, logFile: logFile, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Spawn starts a command from one OS thread that never exits, as every
// process here is started: the parent-death signal (SysProcAttr.Pdeathsig)
// fires when the thread that forked a child exits, not the process, and Go
// may end threads under goroutines it runs.
var Spawn = func() func(*exec.Cmd) error {
	type request struct {
		cmd   *exec.Cmd
		reply chan error
	}
	var once sync.Once
	requests := make(chan request)
	return func(cmd *exec.Cmd) error {
		once.Do(func() {
			go func() {
				runtime.LockOSThread()
				for r := range requests {
					r.reply <- r.cmd.Start()
				}
			}()
		})
		reply := make(chan error)
		requests <- request{cmd, reply}
		return <-reply
	}
}()

// exited tells whether the process has stopped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// failure describes why the process is not usable, with the tail of its log.
func (p *process) failure(what error) error {
	if p.exited() {
		what = fmt.Errorf("%v (%s exited: %v)", what, p.name, p.err)
	}
	return fmt.Errorf("%s: %w\n--- last lines of %s ---\n%s", p.name, what, p.logFile, p.tail(30))
}

func (p *process) tail(lines int) string { return TailFile(p.logFile, lines) }

// TailFile returns the last lines of a log file, for error messages.
func TailFile(file string, lines int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// problemLine matches a log line of severity warning or above: klog's
// "W1201 ...", "E1201 ...", "F1201 ...", and the JSON logs of etcd (zap) and
// kwok (slog).
var problemLine = regexp.MustCompile(`^[WEF]\d{4} |"level":"(?i:warn|error|dpanic|panic|fatal)"`)

// problems keeps the lines of log that are warnings or errors.
func problems(log string) string {
	var kept []string
	for line := range strings.SplitSeq(log, "\n") {
		if problemLine.MatchString(line) {
			kept = append(kept, line)
		}
	}
	if len(kept) == 0 {
		return "(none)"
	}
	return strings.Join(kept, "\n")
}

// waitFor polls ready until it returns nil, the process exits, or timeout passes.
func (p *process) waitFor(timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if p.exited() {
			return p.failure(errors.New("exited before it was ready"))
		}
		if time.Now().After(deadline) {
			return p.failure(fmt.Errorf("not ready after %s: %v", timeout, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// upFor is a readiness check for components with nothing to ask: it passes once
// the process has stayed up for d.
func (p *process) upFor(d time.Duration) func() error {
	return func() error {
		if time.Since(p.started) < d {
			return errors.New("just started")
		}
		return nil
	}
}
