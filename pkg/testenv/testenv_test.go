package testenv

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStopLeavesNoProcessesPortsOrFiles(t *testing.T) {
	e := New(t, Options{ControllerManager: true, Scheduler: true, Nodes: Nodes(1)})

	var pids []int
	for _, p := range e.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	if len(pids) != 5 {
		t.Fatalf("want etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok running, got %d processes", len(pids))
	}
	ports := append([]int(nil), e.ports...)
	if len(ports) != 3 {
		t.Fatalf("want etcd's two ports and kube-apiserver's, got %v", ports)
	}

	e.Stop()

	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill -0: %v)", pid, err)
		}
	}
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("port %d is still taken after Stop: %v", port, err)
			continue
		}
		l.Close()
	}
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("data folder %s still exists after Stop (stat: %v)", e.Dir, err)
	}
}

func TestFailedStartShowsTheComponentLog(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd: not run with -short")
	}
	bin, err := Binary("etcd")
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess(t.TempDir(), "etcd", bin, "--no-such-flag")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(time.Second)

	err = p.waitFor(10*time.Second, func() error { return errors.New("never ready") })
	if err == nil {
		t.Fatal("waitFor succeeded for a process that cannot start")
	}
	for _, want := range []string{"exited before it was ready", "last lines of", "no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}
