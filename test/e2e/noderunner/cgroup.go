package noderunner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroups hold each container's processes in a cgroup (v2) of its own, as a
// container runtime does: when the container's main process ends, whatever
// it started (FRR's daemons detach from it) is killed with it.
type cgroups struct{ root string }

// cgroupMounts are where a cgroup v2 hierarchy may be mounted: a hybrid
// system's unified folder, or the root of a unified one.
var cgroupMounts = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}

func newCgroups() (*cgroups, error) {
	for _, m := range cgroupMounts {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
			continue
		}
		root := filepath.Join(m, fmt.Sprintf("noderunner-%d", os.Getpid()))
		if err := os.Mkdir(root, 0o755); err != nil {
			return nil, fmt.Errorf("creating the runner's cgroup: %w", err)
		}
		return &cgroups{root: root}, nil
	}
	return nil, fmt.Errorf("no cgroup v2 hierarchy at %s: the node runner kills containers by cgroup", strings.Join(cgroupMounts, " or "))
}

// create makes a container's cgroup and opens it, for the container's process
// to start in (SysProcAttr.CgroupFD).
func (g *cgroups) create(name string) (*os.File, error) {
	dir := filepath.Join(g.root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	return os.Open(dir)
}

// kill kills every process left in a container's cgroup, waits until they are
// gone, and removes the cgroup.
func (g *cgroups) kill(name string) error {
	dir := filepath.Join(g.root, name)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.Remove(dir) // refused while the cgroup has processes
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: processes left after kill: %w", name, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// remove removes the runner's cgroup, once every container's is gone.
func (g *cgroups) remove() { _ = os.Remove(g.root) }

// renice sets the nice value of every thread in a container's cgroup; the
// threads they start inherit it.
func (g *cgroups) renice(name string, nice int) error {
	b, err := os.ReadFile(filepath.Join(g.root, name, "cgroup.threads"))
	if err != nil {
		return err
	}
	threads := strings.Fields(string(b))
	if len(threads) == 0 {
		return fmt.Errorf("cgroup %s has no threads to renice", name)
	}
	for _, field := range threads {
		var tid int
		if _, err := fmt.Sscan(field, &tid); err != nil {
			return err
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("renice thread %d: %w", tid, err)
		}
	}
	return nil
}

// processes lists, for each container with more than one process, the
// processes in its cgroup: their state (R running, S sleeping, D waiting on
// I/O), the kernel function a sleeping one waits in, and command line; and
// their children that have exited and not been reaped (Z, which their cgroup
// no longer lists). When a story fails it shows what a container was waiting
// on, such as a reload stuck on a vtysh that never returned.
func (g *cgroups) processes() string {
	dirs, _ := os.ReadDir(g.root)
	var b strings.Builder
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(g.root, d.Name(), "cgroup.procs"))
		pids := strings.Fields(string(data))
		if err != nil || len(pids) < 2 {
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n", d.Name())
		for _, pid := range pids {
			b.WriteString(describeProcess(pid))
			children, _ := os.ReadFile(filepath.Join("/proc", pid, "task", pid, "children"))
			for _, child := range strings.Fields(string(children)) {
				if !slices.Contains(pids, child) {
					fmt.Fprintf(&b, "  child of %s: %s", pid, describeProcess(child))
				}
			}
		}
	}
	return b.String()
}

// describeProcess is a line of the listing: pid, state, wait channel and
// command line (a zombie's name, which has none).
func describeProcess(pid string) string {
	stat, _ := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	name, afterName, _ := strings.Cut(string(stat), ") ")
	_, name, _ = strings.Cut(name, " (")
	state, _, _ := strings.Cut(afterName, " ")
	wchan, _ := os.ReadFile(filepath.Join("/proc", pid, "wchan"))
	cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	command := strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
	if command == "" {
		command = "[" + name + "]"
	}
	return fmt.Sprintf("%s %s %s %s\n", pid, state, wchan, command)
}
