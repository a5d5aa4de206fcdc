package noderunner

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// A container with a process waiting on a child is listed with both, their
// state, where they wait and command lines, and so is a child that has exited
// and not been reaped; a container of one process is not.
func TestProcessesOfContainers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: cgroups are made as root (CI runs as root)")
	}
	g, err := newCgroups()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.remove) // last: after the containers' cgroups, which the cleanups below remove
	start := func(name string, args ...string) {
		cg, _, err := g.create(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, UseCgroupFD: true, CgroupFD: int(cg.Fd())}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := g.kill(name); err != nil {
				t.Error(err)
			}
			_ = cmd.Wait()
		})
	}
	start("pod_waiting", "sh", "-c", "sleep 3600 & wait")
	start("pod_alone", "sleep", "3601")
	// sleep 3602 never reaps its child.
	start("pod_zombie", "sh", "-c", "(sleep 0 & exec sleep 3602) & wait")
	var got string
	listed := func(context.Context) (bool, error) {
		got = g.processes()
		return asleep("sh -c sleep 3600 & wait").MatchString(got) && asleep("sleep 3600").MatchString(got) &&
			zombie.MatchString(got), nil
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, listed); err != nil {
		t.Fatalf("the waiting container's shell and its child, asleep, and the unreaped child are not listed: %v\n%s", err, got)
	}
	if !strings.HasPrefix(got, "--- pod_waiting ---\n") {
		t.Errorf("the waiting container is not named:\n%s", got)
	}
	if strings.Contains(got, "pod_alone") {
		t.Errorf("a container of one process is listed:\n%s", got)
	}
}

// asleep matches the line of a sleeping process, which names the kernel
// function it waits in.
func asleep(cmdline string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[0-9]+ S [a-z_.0-9]+ ` + regexp.QuoteMeta(cmdline) + `$`)
}

// zombie matches the line of an exited child of sleep 3602, which names it.
var zombie = regexp.MustCompile(`(?m)^  child of [0-9]+: [0-9]+ Z [a-z_.0-9]+ \[sleep\]$`)
