package noderunner

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Options configure a Runner.
type Options struct {
	Client  kubernetes.Interface
	Network *Network
	// APIServer is the URL containers reach the API server at.
	APIServer string
	// Namespace and Selector choose the Pods it runs; kwok must leave them alone
	// (testenv.Options.KwokIgnoresPods).
	Namespace, Selector string
	// Pull is the nodes' registry: it finds an image by its whole reference
	// (docker.io/library/x:latest for x); an error fails the pull, as for an
	// image no registry has.
	Pull func(reference string) (Image, error)
	// Dir holds the pods' volumes, roots and container logs.
	Dir string
	// Logf, if set, hears about containers starting and stopping.
	Logf func(format string, args ...any)
}

// Runner runs the containers of the chosen Pods on the Network's nodes.
type Runner struct {
	opts    Options
	self    string // this program, which becomes each container (see Main)
	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup

	cgroups *cgroups

	mu      sync.Mutex
	pods    map[types.UID]*podRun
	stopped map[string]bool // nodes whose kubelet is gone
}

// Start runs the Pods of the Network's nodes until Close.
func Start(ctx context.Context, opts Options) (*Runner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	cg, err := newCgroups()
	if err != nil {
		return nil, err
	}
	r := &Runner{opts: opts, self: self, cgroups: cg, pods: map[types.UID]*podRun{}, stopped: map[string]bool{}}
	r.ctx, r.cancel = context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = opts.Selector }))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.podChanged,
		UpdateFunc: func(_, obj any) { r.podChanged(obj) },
		DeleteFunc: r.podDeleted,
	}); err != nil {
		return nil, err
	}
	factory.Start(r.ctx.Done())
	return r, nil
}

// Close stops every container at once (SIGKILL) and removes what the pods
// used: folders and network namespaces.
func (r *Runner) Close() {
	r.cancel()
	r.running.Wait()
	r.cgroups.remove()
}

// StopNode makes a node's kubelet go away, as when the node fails (SIGKILL) or
// shuts down (SIGTERM): its containers get the signal and nothing on the node
// is restarted or reported again, until StartNode.
func (r *Runner) StopNode(node string, sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped[node] = true
	for _, p := range r.pods {
		if p.node == node {
			p.signal(sig)
		}
	}
}

// StartNode brings a stopped node's kubelet back, as after the node
// rebooted: it runs its pods' containers again (their restart counts go up)
// and reports their status.
func (r *Runner) StartNode(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stopped, node)
}

// Capabilities reads the effective capabilities of a pod's container's
// process, as its node applied them; false when it runs no such container.
func (r *Runner) Capabilities(pod, container string) ([]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.podNamed(pod)
	if p == nil {
		return nil, false
	}
	for _, c := range p.containers {
		if pid := c.pid(); c.spec.Name == container && pid != 0 {
			effective, _, err := processCapabilities(pid)
			return effective, err == nil
		}
	}
	return nil, false
}

// SignalPod sends sig to a pod's running containers, as when one crashes
// (SIGKILL) or is stopped (SIGTERM), its node staying up: the containers are
// restarted as a kubelet restarts them (at once the first time), or go when
// the pod is deleted.
func (r *Runner) SignalPod(name string, sig syscall.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.podNamed(name)
	if p == nil {
		return fmt.Errorf("the node runner runs no pod %s", name)
	}
	p.signal(sig)
	return nil
}

// Renice sets the CPU priority (nice, -20 to 19) of every thread of a pod's
// running containers, as a node whose other work outranks them.
func (r *Runner) Renice(name string, nice int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.podNamed(name)
	if p == nil {
		return fmt.Errorf("the node runner runs no pod %s", name)
	}
	for _, c := range p.all() {
		if c.running() {
			if err := r.cgroups.renice(c.cgroup(p), nice); err != nil {
				return fmt.Errorf("pod %s container %s: %w", name, c.spec.Name, err)
			}
		}
	}
	return nil
}

// podNamed finds a running pod by name; called with the runner locked.
func (r *Runner) podNamed(name string) *podRun {
	for _, p := range r.pods {
		if p.pod.Name == name {
			return p
		}
	}
	return nil
}

func (r *Runner) nodeStopped(node string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped[node]
}

// ContainerLog returns what a pod's container printed, restarts included.
func (r *Runner) ContainerLog(pod, container string) string {
	b, _ := os.ReadFile(r.logFile(pod, container))
	return string(b)
}

func (r *Runner) logFile(pod, container string) string {
	return path.Join(r.opts.Dir, pod+"_"+container+".log")
}

// LogTails returns the last lines of every container's log, for a failed test.
func (r *Runner) LogTails(lines int) string {
	entries, _ := os.ReadDir(r.opts.Dir)
	var b strings.Builder
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".log"); ok {
			data, _ := os.ReadFile(path.Join(r.opts.Dir, e.Name()))
			all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			fmt.Fprintf(&b, "--- %s ---\n%s\n", name, strings.Join(all[max(0, len(all)-lines):], "\n"))
		}
	}
	return b.String()
}

// Processes lists the processes of each container that has more than one,
// with their state and command line.
func (r *Runner) Processes() string { return r.cgroups.processes() }

func (r *Runner) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || r.opts.Network.Node(pod.Spec.NodeName) == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pods[pod.UID]; p != nil {
		p.changed(pod)
		return
	}
	if r.ctx.Err() != nil || r.stopped[pod.Spec.NodeName] {
		return
	}
	p := newPodRun(r, pod)
	r.pods[pod.UID] = p
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		p.run()
		r.mu.Lock()
		delete(r.pods, pod.UID)
		r.mu.Unlock()
	}()
}

func (r *Runner) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pods[pod.UID]; p != nil {
		p.deleted()
	}
}
