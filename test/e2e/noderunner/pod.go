package noderunner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
)

const (
	fieldManager = "noderunner"
	// tick paces the pod's sync: restarts, probes, the kill of a process
	// whose grace is over.
	tick = 250 * time.Millisecond
	// volumeSync paces the refresh of Secret and ConfigMap volumes, and the
	// mounts tried again.
	volumeSync = 2 * time.Second
	// minGrace is a kubelet's least grace for a pod that went from the API
	// server without one.
	minGrace = 2 * time.Second
	// defaultGrace is the grace of a pod that names none (the API's default).
	defaultGrace = 30 * time.Second
)

// podRun is one Pod on its node: its network, volumes and containers.
type podRun struct {
	r      *Runner
	pod    *corev1.Pod // as first seen
	node   string
	host   *Host // the pod's network namespace: its node's, or its own
	ownNet bool
	dir    string

	updates chan *corev1.Pod // the latest Pod, when it changed
	gone    chan struct{}    // closed when the Pod left the API server
	exits   chan *container
	probed  chan probeResult
	done    chan struct{} // closed when the pod's life is over

	inits, containers []*container
	crashes, pulls    *flowcontrol.Backoff // the kubelet's back-offs, by container and by image
	started           metav1.Time
	volumes           map[string]string // volume name → folder
	mounted           bool
	mountError        string    // the last mount failure told
	lastSync          time.Time // when the volumes were last mounted or refreshed
	status            podStatus
}

func newPodRun(r *Runner, pod *corev1.Pod) *podRun {
	p := &podRun{
		r: r, pod: pod.DeepCopy(), node: pod.Spec.NodeName,
		dir:     filepath.Join(r.opts.Dir, string(pod.UID)),
		updates: make(chan *corev1.Pod, 1), gone: make(chan struct{}), exits: make(chan *container),
		probed: make(chan probeResult), done: make(chan struct{}),
		crashes: newBackoff(), pulls: newBackoff(), volumes: map[string]string{},
	}
	for _, spec := range pod.Spec.InitContainers {
		p.inits = append(p.inits, newContainer(spec, true))
	}
	for _, spec := range pod.Spec.Containers {
		p.containers = append(p.containers, newContainer(spec, false))
	}
	return p
}

// changed hands the pod's goroutine the latest Pod; called with the runner locked.
func (p *podRun) changed(pod *corev1.Pod) {
	select {
	case <-p.updates:
	default:
	}
	p.updates <- pod
}

// deleted tells the pod's goroutine that the Pod is gone; called with the runner locked.
func (p *podRun) deleted() {
	select {
	case <-p.gone:
	default:
		close(p.gone)
	}
}

// all is every container of the pod, init containers first.
func (p *podRun) all() []*container {
	return append(append([]*container{}, p.inits...), p.containers...)
}

// signal sends sig to every running container; called with the runner locked.
func (p *podRun) signal(sig syscall.Signal) {
	for _, c := range p.all() {
		c.signal(sig)
	}
}

func (p *podRun) logf(format string, args ...any) {
	p.r.opts.Logf("%s/%s on %s: %s", p.pod.Namespace, p.pod.Name, p.node, fmt.Sprintf(format, args...))
}

// run is the pod's life, from its set-up to its removal.
func (p *podRun) run() {
	defer p.cleanup()
	ctx := p.r.ctx
	if p.pod.DeletionTimestamp != nil {
		p.confirmDeletion(ctx)
		return
	}
	if err := p.setUp(); err != nil {
		p.logf("cannot start: %v", err)
		p.waitForDeletion(ctx)
		return
	}
	p.sync(ctx, time.Now())
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			p.terminate(0)
			return
		case <-p.gone:
			p.terminate(minGrace)
			return
		case pod := <-p.updates:
			if pod.DeletionTimestamp != nil {
				p.terminateDeleted(ctx, pod)
				return
			}
		case c := <-p.exits:
			p.exited(ctx, c, time.Now())
			p.report(ctx)
		case r := <-p.probed:
			p.takeProbe(r, time.Now())
			p.report(ctx)
		case now := <-ticker.C:
			if !p.r.nodeStopped(p.node) {
				p.sync(ctx, now)
			}
		}
	}
}

// setUp gives the pod its network and its volumes' folders, as a kubelet
// does before it mounts them and starts containers.
func (p *podRun) setUp() error {
	if p.pod.Spec.HostNetwork {
		p.host = p.r.opts.Network.Node(p.node)
	} else {
		h, err := p.r.opts.Network.addPod(p.r.opts.Network.Node(p.node))
		if err != nil {
			return err
		}
		p.host, p.ownNet = h, true
	}
	p.pod.Status.PodIP = p.host.IP.String()
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	for _, v := range p.pod.Spec.Volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if v.EmptyDir != nil { // as a kubelet makes it: any of the pod's users may write
			if err := os.Chmod(dir, 0o777); err != nil {
				return err
			}
		}
		p.volumes[v.Name] = dir
	}
	p.started = metav1.Now()
	return nil
}

// sync is one pass of the kubelet over the pod: the volumes mounted (tried
// again until they are; MetalLB's controller creates the memberlist Secret
// its speakers mount) and refreshed; the init containers run to completion,
// one at a time, then the containers started, restarted and probed.
func (p *podRun) sync(ctx context.Context, now time.Time) {
	defer p.report(ctx)
	if now.Sub(p.lastSync) >= volumeSync {
		p.lastSync = now
		p.mount(ctx)
	}
	if !p.mounted {
		return
	}
	for _, c := range p.inits {
		if c.completed == nil {
			p.step(ctx, c, now)
			return
		}
	}
	for _, c := range p.containers {
		p.step(ctx, c, now)
	}
}

// mount writes the volumes' contents; once they are mounted only Secrets and
// ConfigMaps are read again (tokens last longer than any test). A mount that
// fails is told once per failure, as the kubelet's FailedMount Event.
func (p *podRun) mount(ctx context.Context) {
	err := p.syncVolumes(ctx, !p.mounted)
	switch {
	case err == nil:
		p.mounted, p.mountError = true, ""
	case !p.mounted && err.Error() != p.mountError:
		p.mountError = err.Error()
		p.logf("waiting: %v", err)
		p.warn(ctx, "FailedMount", err.Error())
	}
}

// syncVolumes writes every volume's contents, or Secrets' and ConfigMaps'
// alone after the first time.
func (p *podRun) syncVolumes(ctx context.Context, first bool) error {
	for _, v := range p.pod.Spec.Volumes {
		if !first && v.Secret == nil && v.ConfigMap == nil {
			continue
		}
		files, err := volumeContents(ctx, p.r.opts.Client, p.pod, p.nodeIP(), v)
		if err == nil {
			err = writeVolume(p.volumes[v.Name], files)
		}
		if err != nil {
			return fmt.Errorf("MountVolume.SetUp failed for volume %q : %v", v.Name, err)
		}
	}
	return nil
}

func (p *podRun) nodeIP() string { return p.r.opts.Network.Node(p.node).IP.String() }

// step moves a container on: one whose time has come is created or
// restarted, one being stopped is killed once its grace is over, and a
// running one is probed.
func (p *podRun) step(ctx context.Context, c *container, now time.Time) {
	if c.running() {
		if !c.killAt.IsZero() && !now.Before(c.killAt) {
			c.signal(syscall.SIGKILL)
		}
		p.runProbes(c, now)
		return
	}
	if c.heldByNode { // its node is back, as after a reboot: a new kubelet, which knows no back-off
		c.heldByNode, c.next = false, now
		p.crashes.Reset(c.spec.Name)
	}
	if !now.Before(c.next) {
		p.attempt(ctx, c, now)
	}
}

// announceExit hands the container to the pod's goroutine once its process
// is reaped.
func (p *podRun) announceExit(c *container, waited <-chan struct{}) {
	go func() {
		<-waited
		select {
		case p.exits <- c:
		case <-p.done:
		}
	}()
}

// exited records how a container's process ended; an init container that
// succeeded is done, any other is restarted as the kubelet restarts it.
func (p *podRun) exited(ctx context.Context, c *container, now time.Time) {
	if !c.running() {
		return // already stopped by terminate
	}
	t := c.reap()
	if c.init && t.exitCode == 0 {
		c.completed = &t
		p.logf("init container %s completed", c.spec.Name)
		p.sync(ctx, now)
		return
	}
	c.last = &t
	if p.r.nodeStopped(p.node) {
		c.heldByNode = true
		return
	}
	p.logf("container %s exited with %d (%s)", c.spec.Name, t.exitCode, t.reason)
	p.attempt(ctx, c, now)
}

// terminateDeleted stops a deleted pod as a kubelet does: SIGTERM, the grace
// period, SIGKILL; then it removes the Pod.
func (p *podRun) terminateDeleted(ctx context.Context, pod *corev1.Pod) {
	if p.r.nodeStopped(p.node) {
		p.waitForDeletion(ctx)
		return
	}
	grace := time.Duration(0)
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	p.terminate(grace)
	p.confirmDeletion(ctx)
}

// terminate stops every container: SIGTERM, then SIGKILL after grace.
func (p *podRun) terminate(grace time.Duration) {
	p.r.mu.Lock()
	p.signal(syscall.SIGTERM)
	p.r.mu.Unlock()
	deadline := time.After(grace)
	for _, c := range p.all() {
		if !c.running() {
			continue
		}
		select {
		case <-c.waited:
		case <-deadline:
			p.r.mu.Lock()
			p.signal(syscall.SIGKILL)
			p.r.mu.Unlock()
			<-c.waited
		}
		c.reap()
	}
	p.logf("stopped")
}

// confirmDeletion removes the Pod from the API server, as a kubelet does once
// its containers are gone.
func (p *podRun) confirmDeletion(ctx context.Context) {
	zero := int64(0)
	err := p.r.opts.Client.CoreV1().Pods(p.pod.Namespace).Delete(ctx, p.pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		p.logf("removing the pod: %v", err)
	}
}

// waitForDeletion waits, running nothing, until the Pod goes or the runner closes.
func (p *podRun) waitForDeletion(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			p.terminate(0)
			return
		case <-p.gone:
			p.terminate(0)
			return
		case pod := <-p.updates:
			if pod.DeletionTimestamp != nil && !p.r.nodeStopped(p.node) {
				p.terminate(0)
				p.confirmDeletion(ctx)
				return
			}
		case c := <-p.exits:
			if c.running() {
				c.reap() // ended with its stopped node
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func (p *podRun) cleanup() {
	close(p.done)
	if p.ownNet && p.host != nil {
		p.r.opts.Network.removePod(p.host)
	}
	_ = os.RemoveAll(p.dir)
}

// report writes the Pod's status as a kubelet does, when it changed; a
// stopped node reports nothing.
func (p *podRun) report(ctx context.Context) {
	if p.r.nodeStopped(p.node) {
		return
	}
	apply, changed := p.status.update(p, time.Now())
	if !changed {
		return
	}
	if _, err := p.r.opts.Client.CoreV1().Pods(p.pod.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		p.status.written = nil // written again on the next pass
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			p.logf("writing the status: %v", err)
		}
	}
}
