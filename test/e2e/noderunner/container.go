package noderunner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// container is one container of a pod: how its process runs, the current
// process, and what the kubelet reports of it.
type container struct {
	spec corev1.Container
	init bool

	image   *Image      // once pulled
	sandbox sandboxSpec // how its process runs, once created

	mu        sync.Mutex // guards cmd against readers on other goroutines
	cmd       *exec.Cmd  // the current process; nil when none runs
	waited    chan struct{}
	oomKilled bool // whether the memory controller killed in its cgroup; set before waited is closed
	instances int32
	startedAt metav1.Time

	waiting, message string       // why it does not run: the kubelet's reason and message
	completed        *termination // how an init container ended, once it succeeded
	last             *termination // how its previous process ended (lastState)
	next             time.Time    // when to create or restart it
	heldByNode       bool         // ended with its node's kubelet; restarted when the node is back
	killAt           time.Time    // when a process asked to stop gets SIGKILL

	probers         [3]*prober // by probeKind; nil where it has no such probe
	started, ready  bool
	livenessFailure string // the failed probe a kill is for
}

// termination is how a container's process ended, as a kubelet reports it.
type termination struct {
	exitCode              int32
	reason, message       string
	startedAt, finishedAt metav1.Time
	containerID           string
}

func newContainer(spec corev1.Container, init bool) *container {
	return &container{spec: spec, init: init, waiting: "ContainerCreating"}
}

// attempt restarts a container that ended, unless it is backing off, or
// creates it the first time.
func (p *podRun) attempt(ctx context.Context, c *container, now time.Time) {
	if c.last != nil {
		if left, delay := restartWait(p.crashes, c.spec.Name, c.last.finishedAt.Time); left > 0 {
			c.waitFor("CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, c.spec.Name, podFormat(p.pod)), now.Add(left))
			return
		}
	}
	p.create(ctx, c, now)
}

// create pulls the container's image, works out how its process runs and
// starts it, as the kubelet's startContainer does: the first step that fails
// leaves the container waiting with the kubelet's reason, tried again later.
func (p *podRun) create(ctx context.Context, c *container, now time.Time) {
	if c.image == nil && !p.pullImage(c, now) {
		return
	}
	s, reason, err := p.sandboxSpec(ctx, c)
	if err != nil {
		p.logf("container %s: %s: %v", c.spec.Name, reason, err)
		c.waitFor(reason, err.Error(), now.Add(syncRetry))
		return
	}
	c.sandbox = s
	if err := c.start(p); err != nil {
		p.logf("container %s: %v", c.spec.Name, err)
		c.last = &termination{exitCode: 128, reason: "StartError", message: err.Error(), startedAt: metav1.NewTime(now), finishedAt: metav1.NewTime(now)}
		c.waitFor("RunContainerError", err.Error(), now)
		return
	}
	c.waiting, c.message = "", ""
	p.logf("started %s (%s) as pid %d: %s", c.spec.Name, c.spec.Image, c.pid(), describeSandbox(s, c.spec))
}

// pullImage pulls the container's image, or says it is backing off from a
// failed pull, as the kubelet does: ErrImagePull when a pull fails, then
// ImagePullBackOff until the back-off ends.
func (p *podRun) pullImage(c *container, now time.Time) bool {
	if p.pulls.IsInBackOffSinceUpdate(c.spec.Image, now) {
		c.waitFor("ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", c.spec.Image), now.Add(syncRetry))
		return false
	}
	im, err := p.r.pull(c.spec)
	if err != nil {
		p.logf("container %s: %v", c.spec.Name, err)
		p.pulls.Next(c.spec.Image, now)
		c.waitFor(err.(*pullError).reason, err.Error(), now.Add(syncRetry))
		return false
	}
	c.image = &im
	return true
}

// waitFor leaves the container waiting, for a reason, until next.
func (c *container) waitFor(reason, message string, next time.Time) {
	c.waiting, c.message, c.next = reason, message, next
}

// sandboxSpec is how the container's process runs, or why it cannot: the
// kubelet's CreateContainerConfigError for its configuration, the runtime's
// CreateContainerError for what the runtime refuses.
func (p *podRun) sandboxSpec(ctx context.Context, c *container) (sandboxSpec, string, error) {
	const configError, createError = "CreateContainerConfigError", "CreateContainerError"
	env, err := containerEnv(ctx, p.r.opts.Client, p.pod, p.nodeIP(), p.r.opts.APIServer, c.spec)
	if err != nil {
		return sandboxSpec{}, configError, err
	}
	if err := verifyRunAsNonRoot(p.pod, &c.spec, *c.image); err != nil {
		return sandboxSpec{}, configError, err
	}
	argv, err := c.image.argv(expandAll(c.spec.Command, env), expandAll(c.spec.Args, env))
	if err != nil {
		return sandboxSpec{}, createError, err
	}
	caps, err := containerCapabilities(c.spec.SecurityContext)
	if err != nil {
		return sandboxSpec{}, createError, err
	}
	sc := c.spec.SecurityContext
	s := sandboxSpec{Netns: p.host.Netns, Root: filepath.Join(p.dir, "root-"+c.spec.Name), Argv: argv, Env: env,
		Mounts: c.image.mounts(), User: userOf(p.pod.Spec.SecurityContext, sc, *c.image), Capabilities: caps,
		NoNewPrivs: noNewPrivileges(sc), Privileged: sc != nil && ptrOr(sc.Privileged, false),
		ReadOnlyRoot: sc != nil && ptrOr(sc.ReadOnlyRootFilesystem, false)}
	if c.image.System {
		s.Links = systemLinks
	}
	for _, m := range c.spec.VolumeMounts {
		dir, ok := p.volumes[m.Name]
		if !ok {
			return sandboxSpec{}, createError, fmt.Errorf("volume mount %s: no volume of that name", m.Name)
		}
		s.Mounts = append(s.Mounts, mount{Source: filepath.Join(dir, m.SubPath), Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return s, "", nil
}

// start starts the container's process in its sandbox and cgroups, with its
// memory limit; its end is announced on the pod's exits.
func (c *container) start(p *podRun) error {
	c.instances++
	if err := os.MkdirAll(c.sandbox.Root, 0o755); err != nil {
		return err
	}
	log, err := os.OpenFile(p.r.logFile(p.pod.Name, c.spec.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cgroup := c.cgroup(p)
	cg, memoryV1, err := p.r.cgroups.create(cgroup, c.spec.Resources.Limits.Memory().Value())
	if err != nil {
		return err
	}
	defer cg.Close()
	c.sandbox.MemoryCgroup = memoryV1
	cmd, err := p.r.startSandbox(c.sandbox, log, cg)
	if err != nil {
		if killErr := p.r.cgroups.kill(cgroup); killErr != nil {
			p.logf("container %s: %v", c.spec.Name, killErr)
		}
		return err
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		c.oomKilled = p.r.cgroups.oomKills(cgroup) > 0
		// What the container started goes with it, as in a container runtime.
		if err := p.r.cgroups.kill(cgroup); err != nil {
			p.logf("container %s: %v", c.spec.Name, err)
		}
		close(waited)
	}()
	c.mu.Lock()
	c.cmd = cmd
	c.mu.Unlock()
	c.waited, c.startedAt, c.killAt = waited, metav1.Now(), time.Time{}
	c.startProbes(c.startedAt.Time)
	p.announceExit(c, waited)
	return nil
}

// startProbes starts the probe workers of a new process. Without a startup
// probe it has started; without a readiness probe it is ready once started.
func (c *container) startProbes(at time.Time) {
	for k := range c.probers {
		c.probers[k] = nil
		if spec := probeSpec(c.spec, probeKind(k)); spec != nil && !c.init {
			c.probers[k] = newProber(spec, probeKind(k), at)
		}
	}
	c.started = c.probers[startupProbe] == nil
	c.updateReady()
}

func (c *container) updateReady() {
	r := c.probers[readinessProbe]
	c.ready = c.started && (r == nil || ptrOr(r.result, false))
}

// startSandbox starts this program as a sandbox for spec, in a cgroup, its
// output to out, and returns once it executed the container's binary; when it
// could not, it returns why, the process reaped.
func (r *Runner) startSandbox(s sandboxSpec, out io.Writer, cgroup *os.File) (*exec.Cmd, error) {
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	started, tell, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer started.Close()
	cmd := exec.Command(r.self)
	cmd.Env = []string{sandboxEnv + "=" + string(spec)}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{tell} // startedFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, UseCgroupFD: true, CgroupFD: int(cgroup.Fd())}
	err = cmd.Start()
	tell.Close()
	if err != nil {
		return nil, err
	}
	if why, _ := io.ReadAll(started); len(why) > 0 {
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s", why)
	}
	return cmd, nil
}

// cgroup names the container's cgroup.
func (c *container) cgroup(p *podRun) string { return string(p.pod.UID) + "-" + c.spec.Name }

// describeSandbox says who a container's process runs as and what it may do,
// for the runner's log.
func describeSandbox(s sandboxSpec, ctr corev1.Container) string {
	caps := "none"
	if s.User.UID == 0 && len(s.Capabilities) > 0 {
		caps = strings.Join(s.Capabilities, ",")
	}
	d := fmt.Sprintf("uid %d, capabilities %s", s.User.UID, caps)
	if s.Privileged {
		d += ", privileged"
	}
	if s.NoNewPrivs {
		d += ", no new privileges"
	}
	if limit := ctr.Resources.Limits.Memory(); !limit.IsZero() {
		d += ", memory limit " + limit.String()
	}
	return d
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// running tells whether the container has a process not yet reaped and handled.
func (c *container) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd != nil
}

func (c *container) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// signal sends sig to the process, if it runs.
func (c *container) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// reap records how the reaped process ended, as a runtime reports it, and
// forgets it.
func (c *container) reap() termination {
	c.mu.Lock()
	state, pid := c.cmd.ProcessState, c.cmd.Process.Pid
	c.cmd = nil
	c.mu.Unlock()
	t := termination{exitCode: int32(state.ExitCode()), reason: "Completed", startedAt: c.startedAt,
		finishedAt: metav1.Now(), containerID: containerID(pid)}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.exitCode = 128 + int32(ws.Signal())
	}
	switch {
	case c.oomKilled:
		t.reason = "OOMKilled"
	case t.exitCode != 0:
		t.reason = "Error"
	}
	c.started, c.ready, c.killAt = false, false, time.Time{}
	return t
}

func containerID(pid int) string { return fmt.Sprintf("noderunner://%d", pid) }
