package testenv

import (
	"os"
	"os/signal"
	"path/filepath"
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
// clean up, though its components die with it (parent-death signal).
func removeLeftovers() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(dir), dirPrefix), "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(dir)
		}
	}
}
