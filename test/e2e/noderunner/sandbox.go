package noderunner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// sandboxEnv names the file with a sandbox's spec: a program started with it
// set becomes the container (see Main).
const sandboxEnv = "NODERUNNER_SANDBOX"

// sandboxSpec is a container as the runner starts it: the binary in its own
// mount namespace, on a fresh root that holds only its volumes, in its pod's
// network namespace, with the pod's user.
type sandboxSpec struct {
	Netns        string
	Root         string // an empty folder on the host; a tmpfs goes on it
	Binary       string // on the host; it appears at Argv[0] ("": Argv[0] is among the mounts)
	Argv, Env    []string
	Mounts       []mount
	Links        map[string]string // symbolic links in the root: path → target
	ReadOnlyRoot bool
	UID, GID     int
	Groups       []int
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
	file := os.Getenv(sandboxEnv)
	if file == "" {
		return
	}
	err := enterSandbox(file)
	fmt.Fprintln(os.Stderr, "noderunner sandbox:", err)
	os.Exit(127)
}

// enterSandbox sets up the container and executes its binary; it returns only
// on error. The namespaces are entered by this thread alone, which then
// becomes the whole process with exec.
func enterSandbox(file string) error {
	runtime.LockOSThread()
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var s sandboxSpec
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	ns, err := os.Open(netnsPath(s.Netns))
	if err != nil {
		return err
	}
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering network namespace %s: %v", s.Netns, err)
	}
	ns.Close()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %v", err)
	}
	if err := buildRoot(s); err != nil {
		return err
	}
	if err := unix.Chroot(s.Root); err != nil {
		return err
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := becomeUser(s); err != nil {
		return err
	}
	catchEverySignal()
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
// pod's network, the binary and the volumes; read-only where the pod says so.
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
	if err := unix.Mount("proc", at("proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/proc: %v", err)
	}
	if err := unix.Mount("sysfs", at("sys"), "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/sys: %v", err)
	}
	for link, target := range s.Links {
		if err := os.Symlink(target, at(link)); err != nil {
			return err
		}
	}
	mounts := s.Mounts
	if s.Binary != "" {
		mounts = append([]mount{{Source: s.Binary, Target: s.Argv[0], ReadOnly: true}}, mounts...)
	}
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

// becomeUser takes the pod's user and groups. Changing them clears the signal the
// runner asked for on its own death, so it is asked for again.
func becomeUser(s sandboxSpec) error {
	if s.UID != 0 || s.GID != 0 || len(s.Groups) > 0 {
		if err := syscall.Setgroups(s.Groups); err != nil {
			return err
		}
		if err := syscall.Setgid(s.GID); err != nil {
			return err
		}
		if err := syscall.Setuid(s.UID); err != nil {
			return err
		}
	}
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}
