package noderunner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// cgroups hold each container's processes in a cgroup (v2) of its own, as a
// container runtime does: when the container's main process ends, whatever
// it started (FRR's daemons detach from it) is killed with it. A container
// with a memory limit has it applied by the memory controller, in the same
// cgroup where the unified hierarchy has that controller, and in a cgroup of
// the v1 memory hierarchy where it does not (a hybrid system's).
type cgroups struct {
	root string // the runner's cgroup in the unified hierarchy
	// memory is the runner's cgroup in the hierarchy that has the memory
	// controller ("" where none has it), memoryV1 tells which.
	memory   string
	memoryV1 bool
}

// cgroupMounts are where a cgroup v2 hierarchy may be mounted: a hybrid
// system's unified folder, or the root of a unified one.
var cgroupMounts = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}

// memoryV1Mount is where a hybrid system mounts the v1 memory hierarchy.
const memoryV1Mount = "/sys/fs/cgroup/memory"

// runners counts the runners this process made, which each have cgroups of
// their own.
var runners atomic.Int32

func newCgroups() (*cgroups, error) {
	name := fmt.Sprintf("noderunner-%d-%d", os.Getpid(), runners.Add(1))
	for _, m := range cgroupMounts {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
			continue
		}
		root := filepath.Join(m, name)
		if err := os.Mkdir(root, 0o755); err != nil {
			return nil, fmt.Errorf("creating the runner's cgroup: %w", err)
		}
		g := &cgroups{root: root}
		g.findMemory(m, name)
		return g, nil
	}
	return nil, fmt.Errorf("no cgroup v2 hierarchy at %s: the node runner kills containers by cgroup", strings.Join(cgroupMounts, " or "))
}

// findMemory finds where memory limits go: the unified hierarchy when it has
// the memory controller and lets the runner's cgroup hand it down, else a
// cgroup of the runner's in the v1 memory hierarchy, beside this process's.
func (g *cgroups) findMemory(unified, name string) {
	controllers, _ := os.ReadFile(filepath.Join(unified, "cgroup.controllers"))
	if slices.Contains(strings.Fields(string(controllers)), "memory") &&
		os.WriteFile(filepath.Join(g.root, "cgroup.subtree_control"), []byte("+memory"), 0o644) == nil {
		g.memory = g.root
		return
	}
	own, err := memoryV1Cgroup()
	if err != nil {
		return
	}
	dir := filepath.Join(memoryV1Mount, own, name)
	if os.Mkdir(dir, 0o755) == nil {
		g.memory, g.memoryV1 = dir, true
	}
}

// memoryV1Cgroup is this process's cgroup in the v1 memory hierarchy.
func memoryV1Cgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.SplitN(lines.Text(), ":", 3)
		if len(fields) == 3 && slices.Contains(strings.Split(fields[1], ","), "memory") {
			return fields[2], nil
		}
	}
	return "", fmt.Errorf("no v1 memory cgroup")
}

// create makes a container's cgroup and opens it, for the container's process
// to start in (SysProcAttr.CgroupFD). With a memory limit (bytes, 0 for none)
// it also returns the v1 memory cgroup the process must join ("" where the
// limit is on the cgroup itself). As a kubelet does on cgroup v2, an OOM kill
// there takes every process of the container.
func (g *cgroups) create(name string, limit int64) (dir *os.File, memoryV1 string, err error) {
	path := filepath.Join(g.root, name)
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, "", err
	}
	if limit > 0 {
		if memoryV1, err = g.limitMemory(name, limit); err != nil {
			return nil, "", err
		}
	}
	dir, err = os.Open(path)
	return dir, memoryV1, err
}

func (g *cgroups) limitMemory(name string, limit int64) (string, error) {
	if g.memory == "" {
		return "", fmt.Errorf("a memory limit needs the memory cgroup controller, which neither the unified hierarchy nor %s offers the node runner", memoryV1Mount)
	}
	bytes := []byte(strconv.FormatInt(limit, 10))
	if !g.memoryV1 {
		dir := filepath.Join(g.root, name)
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), bytes, 0o644); err != nil {
			return "", err
		}
		return "", os.WriteFile(filepath.Join(dir, "memory.oom.group"), []byte("1"), 0o644)
	}
	dir := filepath.Join(g.memory, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), bytes, 0o644)
}

// oomKills counts the OOM kills in a container's cgroup since it was made.
func (g *cgroups) oomKills(name string) int {
	file := filepath.Join(g.root, name, "memory.events")
	if g.memoryV1 {
		file = filepath.Join(g.memory, name, "memory.oom_control")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// kill kills every process left in a container's cgroup, waits until they are
// gone, and removes the cgroup (and its v1 memory cgroup).
func (g *cgroups) kill(name string) error {
	dir := filepath.Join(g.root, name)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.Remove(dir) // refused while the cgroup has processes
		if err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: processes left after kill: %w", name, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if g.memoryV1 {
		if err := os.Remove(filepath.Join(g.memory, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// remove removes the runner's cgroups, once every container's is gone.
func (g *cgroups) remove() {
	_ = os.Remove(g.root)
	if g.memoryV1 {
		_ = os.Remove(g.memory)
	}
}

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
