package noderunner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

const (
	fieldManager = "noderunner"
	// tick paces probes, restarts and the refresh of Secret and ConfigMap volumes.
	tick        = 250 * time.Millisecond
	volumeSync  = 2 * time.Second
	backoffBase = 10 * time.Second
	backoffMax  = 5 * time.Minute
	// minGrace is a kubelet's least grace for a pod that went from the API
	// server without one.
	minGrace = 2 * time.Second
)

// podRun is one Pod on its node: its network, volumes and containers.
type podRun struct {
	r      *Runner
	pod    *corev1.Pod // as first seen, with the status this runner gives it
	node   string
	host   *Host // the pod's network namespace: its node's, or its own
	ownNet bool
	dir    string

	updates chan *corev1.Pod // the latest Pod, when it changed
	gone    chan struct{}    // closed when the Pod left the API server
	exits   chan *container
	done    chan struct{} // closed when the pod's life is over

	containers []*container
	started    metav1.Time
	ready      bool
	readySince metav1.Time
	volumes    map[string]string // volume name → folder
}

func newPodRun(r *Runner, pod *corev1.Pod) *podRun {
	return &podRun{
		r: r, pod: pod.DeepCopy(), node: pod.Spec.NodeName,
		dir:     filepath.Join(r.opts.Dir, string(pod.UID)),
		updates: make(chan *corev1.Pod, 1), gone: make(chan struct{}), exits: make(chan *container), done: make(chan struct{}),
		volumes: map[string]string{},
	}
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

// signal sends sig to every running container; called with the runner locked.
func (p *podRun) signal(sig syscall.Signal) {
	for _, c := range p.containers {
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
	if err := p.setUp(ctx); err != nil {
		p.logf("cannot start: %v", err)
		p.waitForDeletion(ctx)
		return
	}
	for _, c := range p.containers {
		p.start(c)
	}
	p.report(ctx)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	lastSync := time.Now()
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
			p.exited(c)
			p.report(ctx)
		case now := <-ticker.C:
			if p.r.nodeStopped(p.node) {
				continue
			}
			changed := false
			for _, c := range p.containers {
				changed = c.step(p, now) || changed
			}
			if now.Sub(lastSync) >= volumeSync {
				lastSync = now
				p.syncVolumes(ctx, false)
			}
			if changed {
				p.report(ctx)
			}
		}
	}
}

// setUp gives the pod its network and volumes, as a kubelet does before it
// starts containers.
func (p *podRun) setUp(ctx context.Context) error {
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
	if err := p.waitVolumes(ctx); err != nil {
		return err
	}
	if err := p.runInit(ctx); err != nil {
		return err
	}
	for _, spec := range p.pod.Spec.Containers {
		c, err := p.newContainer(ctx, spec)
		if err != nil {
			return err
		}
		p.containers = append(p.containers, c)
	}
	p.started = metav1.Now()
	return nil
}

// waitVolumes writes the volumes once the Secrets and ConfigMaps they show
// exist, as a kubelet keeps trying to mount one that does not, the pod
// waiting (MetalLB's controller creates the memberlist Secret its speakers
// mount). It gives up when the pod goes or is being deleted.
func (p *podRun) waitVolumes(ctx context.Context) error {
	var missing string
	for {
		err := p.syncVolumes(ctx, true)
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err.Error() != missing {
			missing = err.Error()
			p.logf("waiting: %v", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.gone:
			return fmt.Errorf("deleted while waiting: %v", err)
		case pod := <-p.updates:
			if pod.DeletionTimestamp != nil {
				select { // back for waitForDeletion; a newer one there says as much
				case p.updates <- pod:
				default:
				}
				return fmt.Errorf("being deleted while waiting: %v", err)
			}
		case <-time.After(volumeSync):
		}
	}
}

// syncVolumes writes the volumes' contents; after the first time only Secrets
// and ConfigMaps are read again (tokens last longer than any test).
func (p *podRun) syncVolumes(ctx context.Context, first bool) error {
	for _, v := range p.pod.Spec.Volumes {
		if !first && v.Secret == nil && v.ConfigMap == nil {
			continue
		}
		files, err := volumeContents(ctx, p.r.opts.Client, p.pod, p.nodeIP(), v)
		if err != nil {
			if first {
				return err
			}
			continue
		}
		if err := writeVolume(p.volumes[v.Name], files); err != nil {
			return err
		}
	}
	return nil
}

func (p *podRun) nodeIP() string { return p.r.opts.Network.Node(p.node).IP.String() }

// start runs a container's process; its end is announced on exits.
func (p *podRun) start(c *container) {
	if err := c.start(p); err != nil {
		p.logf("container %s: %v", c.spec.Name, err)
		c.lastErr = err.Error()
		c.restartAt = time.Now().Add(backoffBase)
		return
	}
	p.logf("started %s (%s) as pid %d", c.spec.Name, c.spec.Image, c.cmd.Process.Pid)
	go func(waited <-chan struct{}) {
		<-waited
		select {
		case p.exits <- c:
		case <-p.done:
		}
	}(c.waited)
}

// exited records a container that ended by itself and plans its restart.
func (p *podRun) exited(c *container) {
	if !c.running() {
		return // already stopped by terminate
	}
	code := c.stop()
	if p.r.nodeStopped(p.node) {
		return
	}
	c.restartAt = time.Now().Add(min(backoffBase<<min(c.restarts, 10), backoffMax))
	p.logf("container %s exited with %d; restart in %s", c.spec.Name, code, time.Until(c.restartAt).Round(time.Second))
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
	for _, c := range p.containers {
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
		c.stop()
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
			p.exited(c)
		}
	}
}

func (p *podRun) cleanup() {
	close(p.done)
	if p.ownNet && p.host != nil {
		p.r.opts.Network.removePod(p.host)
	}
	_ = os.RemoveAll(p.dir)
}

// report writes the Pod's status as a kubelet does; a stopped node reports nothing.
func (p *podRun) report(ctx context.Context) {
	if p.r.nodeStopped(p.node) {
		return
	}
	ready := len(p.containers) > 0
	var statuses []*corev1ac.ContainerStatusApplyConfiguration
	for _, c := range p.containers {
		ready = ready && c.ready
		statuses = append(statuses, c.status())
	}
	if ready != p.ready || p.readySince.IsZero() {
		p.ready, p.readySince = ready, metav1.Now()
	}
	condition := func(t corev1.PodConditionType, ok bool, since metav1.Time) *corev1ac.PodConditionApplyConfiguration {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		return corev1ac.PodCondition().WithType(t).WithStatus(s).WithLastTransitionTime(since)
	}
	podIP, hostIP := p.host.IP.String(), p.nodeIP()
	status := corev1ac.PodStatus().WithPhase(corev1.PodRunning).
		WithHostIP(hostIP).WithHostIPs(corev1ac.HostIP().WithIP(hostIP)).
		WithPodIP(podIP).WithPodIPs(corev1ac.PodIP().WithIP(podIP)).
		WithStartTime(p.started).
		WithConditions(condition(corev1.PodInitialized, true, p.started),
			condition(corev1.ContainersReady, ready, p.readySince),
			condition(corev1.PodReady, ready, p.readySince)).
		WithContainerStatuses(statuses...)
	apply := corev1ac.Pod(p.pod.Name, p.pod.Namespace).WithStatus(status)
	if _, err := p.r.opts.Client.CoreV1().Pods(p.pod.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
		p.logf("writing the status: %v", err)
	}
}

// writeSpec writes a container's sandbox spec where its process can read it.
func (p *podRun) writeSpec(name string, s sandboxSpec) (string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	file := filepath.Join(p.dir, name+".sandbox.json")
	return file, os.WriteFile(file, data, 0o600)
}
