package noderunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

// The helper's images (testhelper), of its binary alone: run as root (no
// USER) and as nobody (USER 65534).
const (
	helperImage        = "registry.example.com/noderunner-helper:1"
	nonRootHelperImage = "registry.example.com/noderunner-helper:nonroot"
	helperPath         = "/noderunner-helper"
)

// rule is one thing a kubelet (with CRI-O) holds a container to, shown on a
// pod of its own: the helper's container as change makes it, and what the
// pod must come to.
type rule struct {
	name   string
	change func(*corev1.Pod, *corev1.Container)
	check  func(t *testing.T, c *cluster.Cluster, pod string)
}

// The node runner holds each container to what a kubelet holds it to:
// capabilities, no_new_privs, runAsNonRoot, privileged; liveness, startup and
// readiness probes (HTTP, TCP and exec) with their thresholds and back-off;
// the memory limit; missing keys; images by their whole reference. Each rule
// is a pod of the helper (this test binary) on a real control plane, checked
// by the status the runner writes, as the kubelet writes it, and by what the
// helper prints of its own process.
func TestKubeletRules(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: the node runner runs containers in namespaces and cgroups, which needs root (CI runs as root)")
	}
	binary := filepath.Join(t.TempDir(), "helper")
	build := exec.Command("go", "build", "-o", binary, "./testhelper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // the container has no C library
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the helper: %v\n%s", err, out)
	}
	helper := noderunner.Image{Files: map[string]string{helperPath: binary}, Entrypoint: []string{helperPath}}
	nonRoot := helper
	nonRoot.User = 65534
	c, err := cluster.Start(context.WithoutCancel(t.Context()), cluster.Options{
		Images: map[string]noderunner.Image{helperImage: helper, nonRootHelperImage: nonRoot}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the containers' logs:\n%s", c.Runner.LogTails(20))
		}
		c.Stop()
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: "default"}, Data: map[string][]byte{"present": []byte("yes")}}
	if _, err := c.Client.CoreV1().Secrets("default").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, r := range slices.Concat(capabilityRules, probeRules, resourceRules) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("rule-%d", i)
			createHelper(t, c, name, c.Nodes[i%len(c.Nodes)].Name, r.change)
			r.check(t, c, name)
		})
	}
}

// createHelper creates a pod of the helper that the runner runs, as change
// makes it.
func createHelper(t *testing.T, c *cluster.Cluster, name, node string, change func(*corev1.Pod, *corev1.Container)) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "backend"}}, // cluster.RunnerPods
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "helper", Image: helperImage}}},
	}
	change(pod, &pod.Spec.Containers[0])
	if _, err := c.Client.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func args(a ...string) func(*corev1.Pod, *corev1.Container) {
	return func(_ *corev1.Pod, ctr *corev1.Container) { ctr.Args = a }
}

// Capabilities are CRI-O's default for a root container, then the ones added
// and dropped; a container that is not root holds none of them; bounding set
// and no_new_privs keep its children from more.
var capabilityRules = []rule{
	{"a dropped capability: EPERM",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("raw-socket")(p, ctr)
			ctr.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		},
		failsWith("raw socket: operation not permitted", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000")},
	{"the speaker's: NET_RAW alone, no new privileges",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("raw-socket")(p, ctr)
			ctr.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}, Drop: []corev1.Capability{"ALL"}}}
		},
		runsWith([]string{"NET_RAW"}, "raw socket: ok", "CapBnd:\t0000000000002000", "NoNewPrivs:\t1")},
	{"root by default: CRI-O's set, which lacks NET_RAW", args("raw-socket"),
		failsWith("raw socket: operation not permitted", "CapEff:\t00000000000005fb", "NoNewPrivs:\t0")},
	{"not root: added capabilities are not held",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("raw-socket")(p, ctr)
			ctr.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](65534),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}, Drop: []corev1.Capability{"ALL"}}}
		},
		failsWith("raw socket: operation not permitted", "Uid:\t65534", "CapEff:\t0000000000000000", "CapBnd:\t0000000000002000")},
	{"privileged: every capability",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("raw-socket")(p, ctr)
			ctr.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		},
		runsWith(everyCapability, "raw socket: ok")},
	{"runAsNonRoot with a root image: refused",
		func(p *corev1.Pod, _ *corev1.Container) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
		},
		waits("CreateContainerConfigError", func(p *corev1.Pod) string {
			return fmt.Sprintf(`container has runAsNonRoot and image will run as root (pod: "%s_default(%s)", container: helper)`, p.Name, p.UID)
		})},
	{"runAsNonRoot with a non-root image: runs",
		func(p *corev1.Pod, ctr *corev1.Container) {
			ctr.Image = nonRootHelperImage
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
		},
		runsWith(nil, "Uid:\t65534")},
}

// failsWith checks that the container exits with 1 (again and again) and
// printed lines.
func failsWith(lines ...string) func(*testing.T, *cluster.Cluster, string) {
	return func(t *testing.T, c *cluster.Cluster, pod string) {
		p := waitPod(t, c, pod, "the container exited with 1", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			return s.LastTerminationState.Terminated != nil && s.LastTerminationState.Terminated.ExitCode == 1
		})
		assertPrinted(t, c, p, lines)
	}
}

// crioDefault is what a root container holds by default, in the kernel's
// order; everyCapability stands for every capability the kernel has.
var (
	crioDefault     = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP", "NET_BIND_SERVICE"}
	everyCapability = []string{"every capability"}
)

// runsWith checks that the container runs, ready, with the capabilities given,
// and printed lines.
func runsWith(caps []string, lines ...string) func(*testing.T, *cluster.Cluster, string) {
	return func(t *testing.T, c *cluster.Cluster, pod string) {
		p := waitPod(t, c, pod, "the container runs, ready", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			return s.State.Running != nil && s.Ready
		})
		held, ok := c.Runner.Capabilities(pod, "helper")
		switch {
		case !ok:
			t.Errorf("the runner runs no helper in %s", pod)
		case slices.Equal(caps, everyCapability):
			if !slices.Contains(held, "SYS_ADMIN") || !slices.Contains(held, "NET_ADMIN") {
				t.Errorf("the container holds %v; a privileged one holds every capability", held)
			}
		case !slices.Equal(held, caps):
			t.Errorf("the container holds %v, want %v", held, caps)
		}
		assertPrinted(t, c, p, lines)
	}
}

// waits checks that the container waits with a reason and the message
// (given the pod).
func waits(reason string, message func(*corev1.Pod) string) func(*testing.T, *cluster.Cluster, string) {
	return func(t *testing.T, c *cluster.Cluster, pod string) {
		waitPod(t, c, pod, "the container waits: "+reason, func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			return s.State.Waiting != nil && s.State.Waiting.Reason == reason && s.State.Waiting.Message == message(p)
		})
	}
}

// assertPrinted waits until the container printed every line, which it does
// first thing.
func assertPrinted(t *testing.T, c *cluster.Cluster, p *corev1.Pod, lines []string) {
	t.Helper()
	var log string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		log = c.Runner.ContainerLog(p.Name, "helper")
		return !slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(log, l) }), nil
	})
	if err != nil {
		t.Errorf("the container did not print every one of %q:\n%s", lines, log)
	}
}

// waitPod waits until the pod's (first) container's status is as done says,
// and returns the pod.
func waitPod(t *testing.T, c *cluster.Cluster, name, what string, done func(*corev1.Pod, corev1.ContainerStatus) bool) *corev1.Pod {
	t.Helper()
	return waitPodWithin(t, c, name, what, time.Minute, done)
}

func waitPodWithin(t *testing.T, c *cluster.Cluster, name, what string, timeout time.Duration, done func(*corev1.Pod, corev1.ContainerStatus) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		pod = p
		return done(p, p.Status.ContainerStatuses[0]), nil
	})
	if err != nil {
		status, _ := json.Marshal(pod)
		t.Fatalf("%s: not within %s; the pod: %s", what, timeout, status)
	}
	return pod
}

// Probes run as the kubelet runs them: startup first, liveness and readiness
// once it passed; a liveness or startup probe that fails for good has the
// container killed and restarted, at once the first time and after the
// kubelet's back-off after that.
var probeRules = []rule{
	{"a failing liveness probe: restarted, then backing off",
		serveWith(func(ctr *corev1.Container) { ctr.LivenessProbe = httpProbe("/fail", 2) }),
		func(t *testing.T, c *cluster.Cluster, pod string) {
			waitPod(t, c, pod, "restarted once, then backing off 10 s", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
				last := s.LastTerminationState.Terminated
				return s.RestartCount == 1 && last != nil && last.Reason == "Error" && s.State.Waiting != nil &&
					s.State.Waiting.Reason == "CrashLoopBackOff" &&
					strings.HasPrefix(s.State.Waiting.Message, fmt.Sprintf("back-off 10s restarting failed container=helper pod=%s_default(", p.Name))
			})
		}},
	{"liveness waits for the startup probe",
		serveWith(func(ctr *corev1.Container) {
			ctr.StartupProbe, ctr.LivenessProbe = httpProbe("/after?s=3", 10), httpProbe("/after?s=3", 1)
		}),
		func(t *testing.T, c *cluster.Cluster, pod string) {
			p := waitPod(t, c, pod, "started and ready", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
				return s.Started != nil && *s.Started && s.Ready
			})
			if n := p.Status.ContainerStatuses[0].RestartCount; n != 0 {
				t.Errorf("restarted %d times: the liveness probe, which fails for the first 3 s, ran before the startup probe passed", n)
			}
		}},
	{"liveness alone, failing for the first 3 s: restarted",
		serveWith(func(ctr *corev1.Container) { ctr.LivenessProbe = httpProbe("/after?s=3", 1) }),
		restarted("Error")},
	{"a startup probe that fails for good: restarted",
		serveWith(func(ctr *corev1.Container) { ctr.StartupProbe = httpProbe("/fail", 2) }),
		restarted("Error")},
	{"a TCP readiness probe",
		serveWith(func(ctr *corev1.Container) {
			ctr.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}
		}),
		runsWith(crioDefault)},
	{"an exec readiness probe, in the container's files",
		func(p *corev1.Pod, ctr *corev1.Container) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			ctr.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			ctr.Args = []string{"write-after", "2", "/data/ready"}
			ctr.ReadinessProbe = execProbe(1, helperPath, "exists", "/data/ready")
		},
		func(t *testing.T, c *cluster.Cluster, pod string) {
			waitPod(t, c, pod, "ready once /data/ready exists", func(p *corev1.Pod, s corev1.ContainerStatus) bool { return s.Ready })
		}},
	{"an exec liveness probe that fails: restarted",
		func(_ *corev1.Pod, ctr *corev1.Container) { ctr.LivenessProbe = execProbe(1, helperPath, "exit", "1") },
		restarted("Error")},
}

// serveWith is the helper serving on 8080, with probes.
func serveWith(probes func(*corev1.Container)) func(*corev1.Pod, *corev1.Container) {
	return func(_ *corev1.Pod, ctr *corev1.Container) {
		ctr.Args = []string{"serve", "8080"}
		probes(ctr)
	}
}

func httpProbe(path string, failures int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: failures}
}

func execProbe(failures int32, command ...string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: command}}, PeriodSeconds: 1, FailureThreshold: failures}
}

// restarted checks that the container was restarted, its previous process
// ended for a reason.
func restarted(reason string) func(*testing.T, *cluster.Cluster, string) {
	return func(t *testing.T, c *cluster.Cluster, pod string) {
		waitPod(t, c, pod, "restarted, the last process ended: "+reason, func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			last := s.LastTerminationState.Terminated
			return s.RestartCount >= 1 && last != nil && last.Reason == reason
		})
	}
}

// The memory limit is the memory cgroup's; missing keys and unknown images
// keep a container from starting, with the kubelet's reasons.
var resourceRules = []rule{
	{"over the memory limit: OOMKilled",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("alloc", "256")(p, ctr)
			ctr.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		},
		func(t *testing.T, c *cluster.Cluster, pod string) {
			p := waitPod(t, c, pod, "OOM-killed and restarted", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
				last := s.LastTerminationState.Terminated
				return s.RestartCount >= 1 && last != nil && last.Reason == "OOMKilled" && last.ExitCode == 137
			})
			if strings.Contains(c.Runner.ContainerLog(p.Name, "helper"), "allocated") {
				t.Errorf("the helper allocated 256 MiB under a limit of 64 MiB")
			}
		}},
	{"under the memory limit: runs",
		func(p *corev1.Pod, ctr *corev1.Container) {
			args("alloc", "32")(p, ctr)
			ctr.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
		},
		runsWith(crioDefault, "allocated 32 MiB")},
	{"an environment variable of a missing key: refused",
		secretEnv(nil), waits("CreateContainerConfigError", func(*corev1.Pod) string { return "couldn't find key absent in Secret default/keys" })},
	{"an optional one: left out", secretEnv(ptr.To(true)), runsWith(crioDefault)},
	{"a volume item of a missing key: not mounted",
		func(p *corev1.Pod, ctr *corev1.Container) {
			p.Spec.Volumes = []corev1.Volume{{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "keys", Items: []corev1.KeyToPath{{Key: "absent", Path: "absent"}}}}}}
			ctr.VolumeMounts = []corev1.VolumeMount{{Name: "keys", MountPath: "/keys"}}
		},
		func(t *testing.T, c *cluster.Cluster, pod string) {
			notMounted(t, c, pod, `MountVolume.SetUp failed for volume "keys" : references non-existent secret key: absent`)
		}},
	{"an image no registry has: ErrImagePull, then ImagePullBackOff",
		func(_ *corev1.Pod, ctr *corev1.Container) { ctr.Image = "registry.example.com/unknown:1" },
		pullFails("registry.example.com/unknown:1")},
	{"MetalLB's speaker from another registry: not pulled",
		func(_ *corev1.Pod, ctr *corev1.Container) {
			ctr.Image = "registry.example.com/metallb/speaker:" + release.MetalLB
		},
		pullFails("registry.example.com/metallb/speaker:" + release.MetalLB)},
}

func secretEnv(optional *bool) func(*corev1.Pod, *corev1.Container) {
	return func(_ *corev1.Pod, ctr *corev1.Container) {
		ctr.Env = []corev1.EnvVar{{Name: "KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}, Key: "absent", Optional: optional}}}}
	}
}

// notMounted checks that the pod waits to start, as a kubelet that cannot
// mount one of its volumes, and says why in a FailedMount Event.
func notMounted(t *testing.T, c *cluster.Cluster, pod, message string) {
	waitPod(t, c, pod, "pending, the container waiting to be created", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
		return p.Status.Phase == corev1.PodPending && s.State.Waiting != nil && s.State.Waiting.Reason == "ContainerCreating"
	})
	var seen []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = nil
		for _, e := range events.Items {
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == "FailedMount" && e.Type == corev1.EventTypeWarning && e.Message == message {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no FailedMount Event %q; events: %q", message, seen)
	}
}

// pullFails checks that the image fails to pull (ErrImagePull, naming it),
// then the pulls back off (ImagePullBackOff).
func pullFails(image string) func(*testing.T, *cluster.Cluster, string) {
	return func(t *testing.T, c *cluster.Cluster, pod string) {
		waitPod(t, c, pod, "ErrImagePull", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			w := s.State.Waiting
			return w != nil && w.Reason == "ErrImagePull" && strings.Contains(w.Message, fmt.Sprintf("failed to pull and unpack image %q", image))
		})
		waitPod(t, c, pod, "ImagePullBackOff", func(p *corev1.Pod, s corev1.ContainerStatus) bool {
			w := s.State.Waiting
			return w != nil && w.Reason == "ImagePullBackOff" && w.Message == fmt.Sprintf("Back-off pulling image %q", image)
		})
	}
}
