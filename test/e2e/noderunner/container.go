package noderunner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// container is one container of a pod and its current process.
type container struct {
	spec   corev1.Container
	binary string   // "" for an image of Images
	argv   []string // what runs: the binary's path in the container, and its arguments
	image  Image
	env    []string

	mu  sync.Mutex // guards cmd against signal from other goroutines
	cmd *exec.Cmd

	waited     chan struct{} // closed once the process is reaped
	terminated bool
	exitCode   int32
	startedAt  metav1.Time
	finishedAt metav1.Time
	restarts   int32
	restartAt  time.Time
	lastErr    string

	ready               bool
	probeAt             time.Time
	successes, failures int32
}

func (p *podRun) newContainer(ctx context.Context, spec corev1.Container) (*container, error) {
	binary, argv0, err := p.r.binary(spec.Image)
	if err != nil {
		return nil, err
	}
	env, err := containerEnv(ctx, p.r.opts.Client, p.pod, p.nodeIP(), p.r.opts.APIServer, spec)
	if err != nil {
		return nil, err
	}
	c := &container{spec: spec, binary: binary, env: env}
	if name, _ := imageNameAndTag(spec.Image); binary == "" {
		c.image = p.r.opts.Images[name]
		c.argv = expandAll(c.image.command(spec), env)
		if len(c.argv) == 0 {
			return nil, fmt.Errorf("container %s: an image of the node's files needs a command", spec.Name)
		}
		return c, nil
	}
	if len(spec.Command) > 0 {
		argv0 = spec.Command[0]
	}
	c.argv = append([]string{argv0}, expandAll(append(spec.Command[min(1, len(spec.Command)):], spec.Args...), env)...)
	return c, nil
}

// start starts the container's process in its sandbox.
func (c *container) start(p *podRun) error {
	root := filepath.Join(p.dir, "root-"+c.spec.Name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	s := sandboxSpec{Netns: p.host.Netns, Root: root, Binary: c.binary, Argv: c.argv, Env: c.env, Mounts: c.image.mounts()}
	if c.image.System {
		s.Links = systemLinks
	}
	for _, m := range c.spec.VolumeMounts {
		dir, ok := p.volumes[m.Name]
		if !ok {
			return fmt.Errorf("volume mount %s: no volume of that name", m.Name)
		}
		s.Mounts = append(s.Mounts, mount{Source: filepath.Join(dir, m.SubPath), Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	setUser(&s, p.pod.Spec.SecurityContext, c.spec.SecurityContext)
	file, err := p.writeSpec(c.spec.Name, s)
	if err != nil {
		return err
	}
	log, err := os.OpenFile(p.r.logFile(p.pod.Name, c.spec.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cgroup := c.cgroup(p)
	cg, err := p.r.cgroups.create(cgroup)
	if err != nil {
		return err
	}
	defer cg.Close()
	cmd := exec.Command(p.r.self)
	cmd.Env = []string{sandboxEnv + "=" + file}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, UseCgroupFD: true, CgroupFD: int(cg.Fd())}
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		// What the container started goes with it, as in a container runtime.
		if err := p.r.cgroups.kill(cgroup); err != nil {
			p.logf("container %s: %v", c.spec.Name, err)
		}
		close(waited)
	}()
	c.mu.Lock()
	c.cmd = cmd
	c.mu.Unlock()
	c.waited, c.terminated, c.ready, c.lastErr = waited, false, false, ""
	c.startedAt = metav1.Now()
	c.successes, c.failures = 0, 0
	if pr := c.spec.ReadinessProbe; pr != nil {
		c.probeAt = time.Now().Add(time.Duration(pr.InitialDelaySeconds) * time.Second)
	}
	return nil
}

// cgroup names the container's cgroup.
func (c *container) cgroup(p *podRun) string { return string(p.pod.UID) + "-" + c.spec.Name }

// setUser gives the sandbox the pod's user and groups, the container's
// settings first, and its read-only root.
func setUser(s *sandboxSpec, pod *corev1.PodSecurityContext, ctr *corev1.SecurityContext) {
	if pod != nil {
		s.UID, s.GID = int(ptrOr(pod.RunAsUser, 0)), int(ptrOr(pod.RunAsGroup, 0))
		if pod.FSGroup != nil {
			s.Groups = append(s.Groups, int(*pod.FSGroup))
		}
		for _, g := range pod.SupplementalGroups {
			s.Groups = append(s.Groups, int(g))
		}
	}
	if ctr != nil {
		s.UID = int(ptrOr(ctr.RunAsUser, int64(s.UID)))
		s.GID = int(ptrOr(ctr.RunAsGroup, int64(s.GID)))
		s.ReadOnlyRoot = ptrOr(ctr.ReadOnlyRootFilesystem, false)
	}
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (c *container) running() bool { return c.cmd != nil && !c.terminated }

// signal sends sig to the process, if it runs.
func (c *container) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// stop records the end of a reaped process and returns its exit code.
func (c *container) stop() int32 {
	c.terminated, c.ready = true, false
	c.exitCode = int32(c.cmd.ProcessState.ExitCode())
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c.exitCode = 128 + int32(ws.Signal())
	}
	c.finishedAt = metav1.Now()
	return c.exitCode
}

// step restarts a container whose back-off is over and probes a running one
// when its period is up; it tells whether the container's status changed.
func (c *container) step(p *podRun, now time.Time) bool {
	if !c.running() {
		if c.restartAt.IsZero() || now.Before(c.restartAt) {
			return false
		}
		c.restartAt = time.Time{}
		c.restarts++
		p.start(c)
		return true
	}
	pr := c.spec.ReadinessProbe
	if pr == nil {
		was := c.ready
		c.ready = true
		return !was
	}
	if now.Before(c.probeAt) {
		return false
	}
	c.probeAt = now.Add(time.Duration(max(pr.PeriodSeconds, 1)) * time.Second)
	was := c.ready
	if err := probe(p, c, pr); err != nil {
		c.successes, c.failures = 0, c.failures+1
		if c.failures >= max(pr.FailureThreshold, 1) {
			c.ready = false
		}
	} else {
		c.successes, c.failures = c.successes+1, 0
		if c.successes >= max(pr.SuccessThreshold, 1) {
			c.ready = true
		}
	}
	return c.ready != was
}

// status is the container's status, as a kubelet writes it. The image is the
// Pod's, tag included, so that an upgrade shows.
func (c *container) status() *corev1ac.ContainerStatusApplyConfiguration {
	s := corev1ac.ContainerStatus().WithName(c.spec.Name).WithImage(c.spec.Image).
		WithImageID("noderunner://" + c.binary).WithReady(c.ready).WithRestartCount(c.restarts).
		WithStarted(c.running())
	switch {
	case c.running():
		s.WithContainerID(fmt.Sprintf("noderunner://%d", c.cmd.Process.Pid)).
			WithState(corev1ac.ContainerState().WithRunning(corev1ac.ContainerStateRunning().WithStartedAt(c.startedAt)))
	case c.terminated && c.restartAt.IsZero():
		s.WithState(corev1ac.ContainerState().WithTerminated(corev1ac.ContainerStateTerminated().
			WithExitCode(c.exitCode).WithStartedAt(c.startedAt).WithFinishedAt(c.finishedAt)))
	default:
		reason, msg := "CrashLoopBackOff", fmt.Sprintf("exited with %d; restarting", c.exitCode)
		if c.lastErr != "" {
			reason, msg = "StartError", c.lastErr
		}
		s.WithState(corev1ac.ContainerState().WithWaiting(corev1ac.ContainerStateWaiting().WithReason(reason).WithMessage(msg)))
	}
	return s
}
