package testenv

import (
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// running holds the environments not yet stopped, for the interrupt handler.
var running = struct {
	sync.Mutex
	envs map[*Env]struct{}
}{envs: map[*Env]struct{}{}}

func register(e *Env) {
	running.Lock()
	defer running.Unlock()
	running.envs[e] = struct{}{}
}

func unregister(e *Env) {
	running.Lock()
	defer running.Unlock()
	delete(running.envs, e)
}

// StopOnInterrupt makes SIGINT and SIGTERM stop every running environment before
// the process ends, which it would otherwise do without running test cleanups.
// New calls it; a test that calls Start itself calls it too.
var StopOnInterrupt = sync.OnceFunc(func() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		running.Lock()
		envs := make([]*Env, 0, len(running.envs))
		for e := range running.envs {
			envs = append(envs, e)
		}
		running.Unlock()
		var wg sync.WaitGroup
		for _, e := range envs {
			wg.Go(e.Stop)
		}
		wg.Wait()
		// End the way the signal would have ended us.
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()
})

// removeLeftovers deletes the folders of environments whose process is gone: a
// test binary killed outright (SIGKILL, or a `go test -timeout` panic) cannot
// clean up. The components it started itself die with it (parent-death
// signal); etcd and kube-apiserver, started by envtest, do not, and are killed
// here: they are the processes whose command line names a file in the folder.
func removeLeftovers() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(dir), dirPrefix), "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		for _, orphan := range findProcesses(func(args []string) bool {
			return slices.ContainsFunc(args, func(arg string) bool { return strings.Contains(arg, dir+"/") })
		}) {
			_ = syscall.Kill(orphan, syscall.SIGKILL)
		}
		_ = os.RemoveAll(dir)
	}
}

// findProcesses returns the ids of the processes whose command line, read
// from /proc, matches. Processes that end meanwhile are skipped.
func findProcesses(match func(args []string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 { // gone, or a zombie
			continue
		}
		if match(strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
