package noderunner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sandboxEnv holds a sandbox's spec, as JSON: a program started with it set
// becomes the container (see Main).
const sandboxEnv = "NODERUNNER_SANDBOX"

// startedFD is the sandbox's end of a pipe that closes when the container's
// binary is executed, or tells why it could not be, as a runtime's exec FIFO.
const startedFD = 3

// sandboxSpec is a container as the runner starts it: the binary in its own
// mount namespace, on a fresh root that holds only its image's files and its
// volumes, in its pod's network namespace, with the pod's user, the
// container's capabilities and, where it has a memory limit, in a memory
// cgroup. An exec probe's process (Join) enters the namespaces and root of
// the container's process instead.
type sandboxSpec struct {
	Netns        string
	Root         string // an empty folder on the host; a tmpfs goes on it
	Argv, Env    []string
	Mounts       []mount
	Links        map[string]string // symbolic links in the root: path → target
	ReadOnlyRoot bool
	User         processUser
	Capabilities []string // the process's bounding set, and effective one if it is root
	NoNewPrivs   bool
	Privileged   bool   // /sys and /proc/sys writable, as for a privileged container
	MemoryCgroup string // a cgroup v1 memory folder the process joins first; "" for none
	Join         int    // the container process whose namespaces and root an exec probe enters
}

type mount struct {
	Source, Target string
	ReadOnly       bool
}

// Main turns the process into a container when the runner started it as one,
// and returns at once otherwise. Programs that run a Runner (the end-to-end
// tests' TestMain, the demo) call it first thing: the runner starts containers
// by running its own program again, which then sets up the container's
// namespaces and executes the binary.
func Main() {
	spec := os.Getenv(sandboxEnv)
	if spec == "" {
		return
	}
	err := enterSandbox([]byte(spec))
	fmt.Fprintln(os.Stderr, "noderunner sandbox:", err)
	fmt.Fprint(os.NewFile(startedFD, "started"), err)
	os.Exit(127)
}

// enterSandbox sets up the container and executes its binary; it returns only
// on error. The namespaces are entered by this thread alone, which then
// becomes the whole process with exec.
func enterSandbox(spec []byte) error {
	runtime.LockOSThread()
	var s sandboxSpec
	if err := json.Unmarshal(spec, &s); err != nil {
		return err
	}
	if s.MemoryCgroup != "" {
		if err := os.WriteFile(filepath.Join(s.MemoryCgroup, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return fmt.Errorf("joining memory cgroup %s: %v", s.MemoryCgroup, err)
		}
	}
	var err error
	if s.Join != 0 {
		err = joinContainer(s)
	} else {
		err = makeContainer(s)
	}
	if err != nil {
		return err
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	return execAs(s)
}

// makeContainer enters the pod's network namespace and a mount namespace of
// the container's own, whose root it builds and changes to.
func makeContainer(s sandboxSpec) error {
	ns, err := os.Open(netnsPath(s.Netns))
	if err != nil {
		return err
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering network namespace %s: %v", s.Netns, err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %v", err)
	}
	if err := buildRoot(s); err != nil {
		return err
	}
	return unix.Chroot(s.Root)
}

// joinContainer enters the network and mount namespaces of the container's
// process, and its root, as a runtime's exec does.
func joinContainer(s sandboxSpec) error {
	// A thread that shares its file system attributes cannot change its
	// mount namespace.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return err
	}
	for _, ns := range []struct {
		name string
		kind int
	}{{"net", unix.CLONE_NEWNET}, {"mnt", unix.CLONE_NEWNS}} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", s.Join, ns.name))
		if err != nil {
			return err
		}
		err = unix.Setns(int(f.Fd()), ns.kind)
		f.Close()
		if err != nil {
			return fmt.Errorf("entering the %s namespace of process %d: %v", ns.name, s.Join, err)
		}
	}
	return unix.Chroot(s.Root)
}

// execAs executes the container's binary as its user, with its capabilities:
// the bounding set cut first (as root), then the user taken, then what a
// root process holds set; no_new_privs last, where asked.
func execAs(s sandboxSpec) error {
	if err := limitCapabilities(s.Capabilities); err != nil {
		return err
	}
	if err := becomeUser(s.User); err != nil {
		return err
	}
	if s.User.UID == 0 {
		if err := holdCapabilities(s.Capabilities); err != nil {
			return err
		}
	}
	if s.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	catchEverySignal()
	unix.CloseOnExec(startedFD)
	return syscall.Exec(s.Argv[0], s.Argv, s.Env)
}

// catchEverySignal has this process catch every signal until it executes the
// container's binary, which then starts with each at its default, as a
// container runtime starts it: exec keeps a signal ignored, and a test run
// started by nohup, or as a shell's background job, ignores SIGHUP, SIGINT
// and SIGQUIT. A shell cannot trap a signal ignored from its start, so
// frr-k8s's reloader, told by SIGHUP, never reloaded FRR.
func catchEverySignal() {
	signal.Notify(make(chan os.Signal, 1))
}

// buildRoot mounts the container's root: a tmpfs with /dev, /proc, /sys of the
// pod's network, the image's files and the volumes; read-only where the pod
// says so.
func buildRoot(s sandboxSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %v", err)
	}
	if err := unix.Mount("tmpfs", s.Root, "tmpfs", 0, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("root tmpfs: %v", err)
	}
	at := func(p string) string { return filepath.Join(s.Root, p) }
	for _, d := range []string{"dev", "proc", "sys", "tmp", "etc"} {
		if err := os.MkdirAll(at(d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("/dev", at("dev"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("/dev: %v", err)
	}
	if err := mountKernelFiles(at, s.Privileged); err != nil {
		return err
	}
	for link, target := range s.Links {
		if err := os.Symlink(target, at(link)); err != nil {
			return err
		}
	}
	mounts := slices.Clone(s.Mounts)
	// Parents before children: a volume may be mounted inside another.
	slices.SortStableFunc(mounts, func(a, b mount) int { return len(a.Target) - len(b.Target) })
	for _, m := range mounts {
		if err := bind(m, at(m.Target)); err != nil {
			return err
		}
	}
	for _, m := range mounts {
		if m.ReadOnly {
			if err := unix.Mount("", at(m.Target), "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("%s read-only: %v", m.Target, err)
			}
		}
	}
	if s.ReadOnlyRoot {
		if err := unix.Mount("", s.Root, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("read-only root: %v", err)
		}
	}
	return nil
}

// bind mounts a file or folder of the host at target, creating the mount point.
func bind(m mount, target string) error {
	info, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	if info.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
		err = os.WriteFile(target, nil, 0o755)
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %v", m.Target, err)
	}
	if err := unix.Mount(m.Source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting %s at %s: %v", m.Source, m.Target, err)
	}
	return nil
}

// mountKernelFiles mounts /proc and /sys as a runtime does: /sys and
// /proc/sys read-only unless the container is privileged.
func mountKernelFiles(at func(string) string, privileged bool) error {
	if err := unix.Mount("proc", at("proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/proc: %v", err)
	}
	readOnly := uintptr(unix.MS_RDONLY)
	if privileged {
		readOnly = 0
	}
	if err := unix.Mount("sysfs", at("sys"), "sysfs", readOnly|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/sys: %v", err)
	}
	if privileged {
		return nil
	}
	if err := unix.Mount(at("proc/sys"), at("proc/sys"), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("/proc/sys: %v", err)
	}
	if err := unix.Mount("", at("proc/sys"), "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("/proc/sys read-only: %v", err)
	}
	return nil
}

// becomeUser takes the container's user and groups. Changing them clears the
// signal the runner asked for on its own death, so it is asked for again.
func becomeUser(u processUser) error {
	if u.UID != 0 || u.GID != 0 || len(u.Groups) > 0 {
		groups := make([]int, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = int(g)
		}
		if err := syscall.Setgroups(groups); err != nil {
			return err
		}
		if err := syscall.Setgid(int(u.GID)); err != nil {
			return err
		}
		if err := syscall.Setuid(int(u.UID)); err != nil {
			return err
		}
	}
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}
