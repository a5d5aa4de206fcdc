package noderunner

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeKind is which of a container's probes: the kubelet runs startup first,
// and liveness and readiness only once it passed.
type probeKind int

const (
	startupProbe probeKind = iota
	livenessProbe
	readinessProbe
)

func (k probeKind) String() string { return [...]string{"startup", "liveness", "readiness"}[k] }

// probeSpec is a container's probe of a kind; nil when it has none.
func probeSpec(c corev1.Container, k probeKind) *corev1.Probe {
	return [...]*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe}[k]
}

// prober is the state of one probe of a container's current process, as the
// kubelet's probe worker keeps it.
type prober struct {
	spec     *corev1.Probe
	next     time.Time // when it runs next
	inFlight bool
	last     *bool // the last outcome, nil before the first
	run      int32 // how many times in a row it came
	result   *bool // the result the kubelet acts on; nil while unknown
}

// newProber starts a probe's worker for a process started at start; the
// result before any probe is the kubelet's: failure for readiness (not ready),
// success for liveness, failure (not started) for startup.
func newProber(spec *corev1.Probe, k probeKind, start time.Time) *prober {
	pr := &prober{spec: spec, next: start.Add(time.Duration(spec.InitialDelaySeconds) * time.Second)}
	if k != startupProbe {
		pr.result = ptrTo(k == livenessProbe)
	}
	return pr
}

// due tells whether the probe runs at now, and if so plans the next run.
func (pr *prober) due(now time.Time) bool {
	if pr.inFlight || now.Before(pr.next) {
		return false
	}
	pr.next = now.Add(time.Duration(max(pr.spec.PeriodSeconds, 1)) * time.Second)
	pr.inFlight = true
	return true
}

// record takes a probe's outcome as the kubelet does: the result changes once
// the outcome has come successThreshold or failureThreshold times in a row.
// It tells whether the result changed.
func (pr *prober) record(ok bool) bool {
	pr.inFlight = false
	if pr.last != nil && *pr.last == ok {
		pr.run++
	} else {
		pr.last, pr.run = &ok, 1
	}
	threshold := max(pr.spec.FailureThreshold, 1)
	if ok {
		threshold = max(pr.spec.SuccessThreshold, 1)
	}
	if pr.run < threshold || (pr.result != nil && *pr.result == ok) {
		return false
	}
	pr.result = &ok
	return true
}

// probeResult is a probe's outcome, for the prober of the process it probed.
type probeResult struct {
	c      *container
	kind   probeKind
	prober *prober
	err    error
}

// probeTarget is what a probe reaches: the pod's network, the container's
// ports, and for exec its process, as the sandbox that started it.
type probeTarget struct {
	p       *podRun
	ctr     corev1.Container
	sandbox sandboxSpec
	pid     int
	cgroup  string
}

// runProbes starts the container's probes whose period is up, each on a
// goroutine of its own as the kubelet's workers: startup until it passed,
// then liveness and readiness; none while the process is being stopped.
func (p *podRun) runProbes(c *container, now time.Time) {
	if !c.killAt.IsZero() {
		return
	}
	t := probeTarget{p: p, ctr: c.spec, sandbox: c.sandbox, pid: c.pid(), cgroup: c.cgroup(p)}
	for k, pr := range c.probers {
		if pr == nil || (probeKind(k) == startupProbe) == c.started || !pr.due(now) {
			continue
		}
		go func() {
			r := probeResult{c: c, kind: probeKind(k), prober: pr, err: probe(t, pr.spec)}
			select {
			case p.probed <- r:
			case <-p.done:
			}
		}()
	}
}

// takeProbe acts on a probe's outcome as the kubelet does: a startup probe
// that passed lets the others run, one that failed for good, or a liveness
// probe that did, has the container killed (and restarted); readiness makes
// it ready or not.
func (p *podRun) takeProbe(r probeResult, now time.Time) {
	c, pr := r.c, r.prober
	if c.probers[r.kind] != pr {
		return // of a process that ended
	}
	if !pr.record(r.err == nil) {
		return
	}
	switch {
	case *pr.result && r.kind == startupProbe:
		c.started = true
	case !*pr.result && r.kind != readinessProbe:
		p.kill(c, r, now)
	case !*pr.result:
		p.logf("container %s: readiness probe failed: %v", c.spec.Name, r.err)
	}
	c.updateReady()
}

// kill stops a container whose startup or liveness probe failed, with the
// probe's grace or the pod's: SIGTERM now, SIGKILL once the grace is over.
func (p *podRun) kill(c *container, r probeResult, now time.Time) {
	grace := defaultGrace
	if s := p.pod.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	if s := r.prober.spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	p.logf("container %s failed %s probe, will be restarted: %v", c.spec.Name, r.kind, r.err)
	c.signal(syscall.SIGTERM)
	c.killAt = now.Add(grace)
}

// probe runs a probe against a container's current process as a kubelet
// does: HTTP and TCP from the pod's network namespace (the kubelet of a
// host-network pod is on the same network), exec in the container.
func probe(t probeTarget, pr *corev1.Probe) error {
	timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
	switch {
	case pr.HTTPGet != nil:
		return probeHTTP(t, pr.HTTPGet, timeout)
	case pr.TCPSocket != nil:
		return probeTCP(t, pr.TCPSocket, timeout)
	case pr.Exec != nil:
		return probeExec(t, pr.Exec.Command, timeout)
	}
	return fmt.Errorf("the node runner runs HTTP, TCP and exec probes, not this one")
}

func probeHTTP(t probeTarget, get *corev1.HTTPGetAction, timeout time.Duration) error {
	port, err := probePort(t.ctr, get.Port)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(get.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, // as a kubelet's HTTPS probes
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialInPod(ctx, t.p, network, addr, timeout)
		},
	}}
	req, err := http.NewRequest(http.MethodGet, scheme+"://"+net.JoinHostPort(probeHost(t.p, get.Host), strconv.Itoa(port))+get.Path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	for _, h := range get.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

func probeTCP(t probeTarget, tcp *corev1.TCPSocketAction, timeout time.Duration) error {
	port, err := probePort(t.ctr, tcp.Port)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := dialInPod(ctx, t.p, "tcp", net.JoinHostPort(probeHost(t.p, tcp.Host), strconv.Itoa(port)), timeout)
	if err != nil {
		return err
	}
	return conn.Close()
}

// probeExec runs a command in the container, as the container's process
// runs and in its cgroup, and fails when it exits with another code than 0
// or outlasts the timeout (its output, as the kubelet's, in the failure).
func probeExec(t probeTarget, command []string, timeout time.Duration) error {
	s := t.sandbox
	s.Argv, s.Join = command, t.pid
	cgroup, err := os.Open(filepath.Join(t.p.r.cgroups.root, t.cgroup))
	if err != nil {
		return fmt.Errorf("container %s is not running: %v", t.ctr.Name, err)
	}
	defer cgroup.Close()
	var out bytes.Buffer
	cmd, err := t.p.r.startSandbox(s, &out, cgroup)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("command %q timed out", strings.Join(command, " "))
	}
	if err != nil {
		return fmt.Errorf("command %q: %v: %s", strings.Join(command, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// dialInPod connects from the pod's network namespace.
func dialInPod(ctx context.Context, p *podRun, network, addr string, timeout time.Duration) (conn net.Conn, err error) {
	dialErr := inNetns(p.host.Netns, func() error {
		conn, err = (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, addr)
		return err
	})
	return conn, dialErr
}

// probeHost is where a probe connects: its host, or the pod's address.
func probeHost(p *podRun, host string) string {
	if host == "" {
		return p.host.IP.String()
	}
	return host
}

func probePort(ctr corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range ctr.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("probe port %s is not a port of the container", port.StrVal)
}
