package noderunner

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// A container with a process waiting on a child is listed with both, their
// state and command lines; a container of one process is not.
func TestProcessesOfContainers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: cgroups are made as root (CI runs as root)")
	}
	g, err := newCgroups()
	if err != nil {
		t.Fatal(err)
	}
	defer g.remove()
	start := func(name string, args ...string) {
		cg, err := g.create(name)
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
	var got string
	listed := func(context.Context) (bool, error) {
		got = g.processes()
		return strings.Contains(got, " S sh -c sleep 3600 & wait\n") && strings.Contains(got, " S sleep 3600\n"), nil
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, listed); err != nil {
		t.Fatalf("the waiting container's shell and its child, asleep, are not listed: %v\n%s", err, got)
	}
	if !strings.HasPrefix(got, "--- pod_waiting ---\n") {
		t.Errorf("the waiting container is not named:\n%s", got)
	}
	if strings.Contains(got, "pod_alone") {
		t.Errorf("a container of one process is listed:\n%s", got)
	}
}
