package noderunner

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// podStatus is what the runner last wrote of a pod's status, and since when
// each condition holds.
type podStatus struct {
	written []byte
	since   map[corev1.PodConditionType]condition
}

type condition struct {
	ok bool
	at metav1.Time
}

// update is the pod's status as a kubelet writes it, and whether it differs
// from what was written last.
func (s *podStatus) update(p *podRun, now time.Time) (*corev1ac.PodApplyConfiguration, bool) {
	podIP, hostIP := p.host.IP.String(), p.nodeIP()
	initialized, initPending := p.initialized()
	notReady := unready(p.containers)
	status := corev1ac.PodStatus().WithPhase(p.phase()).
		WithHostIP(hostIP).WithHostIPs(corev1ac.HostIP().WithIP(hostIP)).
		WithPodIP(podIP).WithPodIPs(corev1ac.PodIP().WithIP(podIP)).
		WithStartTime(p.started).
		WithConditions(
			s.condition(corev1.PodReadyToStartContainers, true, "", "", now),
			s.condition(corev1.PodInitialized, initialized, "ContainersNotInitialized", "containers with incomplete status: "+initPending, now),
			s.condition(corev1.ContainersReady, notReady == "", "ContainersNotReady", "containers with unready status: "+notReady, now),
			s.condition(corev1.PodReady, notReady == "", "ContainersNotReady", "containers with unready status: "+notReady, now))
	for _, c := range p.inits {
		status.WithInitContainerStatuses(c.status(initialized))
	}
	for _, c := range p.containers {
		status.WithContainerStatuses(c.status(initialized))
	}
	apply := corev1ac.Pod(p.pod.Name, p.pod.Namespace).WithStatus(status)
	data, _ := json.Marshal(apply)
	if bytes.Equal(data, s.written) {
		return apply, false
	}
	s.written = data
	return apply, true
}

// condition is a pod condition, with the reason and message the kubelet gives
// it when it does not hold, and the time it last changed.
func (s *podStatus) condition(t corev1.PodConditionType, ok bool, reason, message string, now time.Time) *corev1ac.PodConditionApplyConfiguration {
	if s.since == nil {
		s.since = map[corev1.PodConditionType]condition{}
	}
	c, seen := s.since[t]
	if !seen || c.ok != ok {
		c = condition{ok: ok, at: metav1.NewTime(now)}
		s.since[t] = c
	}
	ac := corev1ac.PodCondition().WithType(t).WithStatus(corev1.ConditionFalse).WithLastTransitionTime(c.at)
	if ok {
		return ac.WithStatus(corev1.ConditionTrue)
	}
	return ac.WithReason(reason).WithMessage(message)
}

// initialized tells whether every init container completed, and names those
// that did not as the kubelet's message lists them.
func (p *podRun) initialized() (bool, string) {
	var pending []string
	for _, c := range p.inits {
		if c.completed == nil {
			pending = append(pending, c.spec.Name)
		}
	}
	return len(pending) == 0, "[" + strings.Join(pending, " ") + "]"
}

// unready names the containers that are not ready, "" when all are.
func unready(cs []*container) string {
	var names []string
	for _, c := range cs {
		if !c.ready {
			names = append(names, c.spec.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "[" + strings.Join(names, " ") + "]"
}

// phase is the kubelet's for a pod whose containers always restart: Pending
// while an init container has not completed or a container never ran,
// Running after.
func (p *podRun) phase() corev1.PodPhase {
	if ok, _ := p.initialized(); !ok {
		return corev1.PodPending
	}
	for _, c := range p.containers {
		if c.instances == 0 {
			return corev1.PodPending
		}
	}
	return corev1.PodRunning
}

// status is the container's status, as a kubelet writes it: its state,
// how its previous process ended, its restarts. The image is the Pod's, tag
// included, so that an upgrade shows. A container that waits for the init
// containers says so (PodInitializing).
func (c *container) status(initialized bool) *corev1ac.ContainerStatusApplyConfiguration {
	s := corev1ac.ContainerStatus().WithName(c.spec.Name).WithImage(c.spec.Image).
		WithReady(c.ready).WithRestartCount(max(c.instances-1, 0)).WithStarted(c.started)
	if c.image != nil {
		s.WithImageID("noderunner://" + c.spec.Image)
	}
	if c.last != nil {
		s.WithLastTerminationState(corev1ac.ContainerState().WithTerminated(c.last.applyConfig()))
	}
	switch {
	case c.completed != nil:
		s.WithContainerID(c.completed.containerID).WithState(corev1ac.ContainerState().WithTerminated(c.completed.applyConfig()))
	case c.running():
		s.WithContainerID(containerID(c.pid())).
			WithState(corev1ac.ContainerState().WithRunning(corev1ac.ContainerStateRunning().WithStartedAt(c.startedAt)))
	default:
		reason, message := c.waiting, c.message
		if !c.init && !initialized {
			reason, message = "PodInitializing", ""
		}
		if c.init && c.instances == 0 && reason == "ContainerCreating" {
			reason = "PodInitializing"
		}
		waiting := corev1ac.ContainerStateWaiting().WithReason(reason)
		if message != "" {
			waiting.WithMessage(message)
		}
		s.WithState(corev1ac.ContainerState().WithWaiting(waiting))
	}
	return s
}

func (t *termination) applyConfig() *corev1ac.ContainerStateTerminatedApplyConfiguration {
	ac := corev1ac.ContainerStateTerminated().WithExitCode(t.exitCode).WithReason(t.reason).
		WithStartedAt(t.startedAt).WithFinishedAt(t.finishedAt)
	if t.containerID != "" {
		ac.WithContainerID(t.containerID)
	}
	if t.message != "" {
		ac.WithMessage(t.message)
	}
	return ac
}
