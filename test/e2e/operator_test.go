package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

const operatorNamespace = "cluster-network-operator"

func TestVersionPrintsTheStampedVersion(t *testing.T) {
	out, err := exec.Command(operatorBinary, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != testVersion {
		t.Errorf("version printed %q, want %q", got, testVersion)
	}
}

func TestBadInvocationsFailWithOneLine(t *testing.T) {
	closed := closedPortKubeconfig(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"unknown flag", []string{"start", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{"bad flag value", []string{"start", "--log-level=loud"}, 2, `--log-level "loud"`},
		{"bad namespace", []string{"start", "--namespace=Metal_LB"}, 2, `--namespace "Metal_LB" is not a valid namespace name`},
		{"unknown command", []string{"stat"}, 2, `unknown command "stat"`},
		{"missing kubeconfig", []string{"start", "--kubeconfig=/nonexistent/kubeconfig"}, 1, `cannot load a kubeconfig (--kubeconfig "/nonexistent/kubeconfig")`},
		{"negative Lease timing", []string{"start", "--kubeconfig=" + closed, "--leader-elect=false", "--leader-election-lease-duration=-1s"}, 2,
			"--leader-election-lease-duration -1s is negative"},
		{"plain-HTTP metrics off loopback", []string{"start", "--kubeconfig=" + closed, "--metrics-secure=false", "--metrics-bind-address=0.0.0.0:8443"}, 2,
			`--metrics-secure=false serves the metrics to anyone: --metrics-bind-address "0.0.0.0:8443" must be a loopback address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runToExit(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			assertOneLineError(t, stderr, tc.want)
		})
	}
}

// A configuration error exits at once, with one line that names it; errors
// that pass are tried again instead (TestOperatorStartsThroughFaults).
func TestConfigurationErrorsAreNamed(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	for _, tc := range []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
	}{
		{"missing namespace", env.Kubeconfig, []string{"--operator-namespace=not-there"}, `namespace "not-there" (--operator-namespace) does not exist`},
		{"refused credentials", tokenKubeconfig(t, env, "not-a-token"), nil, "the Kubernetes API server at " + env.Config.Host + " refused the operator's credentials (Unauthorized)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runToExit(t, append([]string{"start", "--kubeconfig=" + tc.kubeconfig}, tc.args...)...)
			if code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			assertOneLineError(t, stderr, tc.want)
		})
	}
}

// The operator becomes ready and takes the Lease; a second replica waits, ready
// as a standby, and takes over as soon as the first stops on SIGTERM.
func TestLeaderElectionHandsOverOnSIGTERM(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)

	// Short timings, by the flags: a standby retries every 2 s.
	const retryPeriod = 2 * time.Second
	timings := []string{"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=" + retryPeriod.String()}
	first := startOperator(t, env, nil, timings...)
	first.waitReady(t)
	leader := waitLeaseHolder(t, client, func(string) bool { return true })
	first.waitLog(t, "Successfully acquired lease")
	assertJSONLogs(t, first)

	second := startOperator(t, env, nil, timings...)
	second.waitReady(t)
	second.waitLog(t, "Attempting to acquire leader lease")
	// Over two retry periods the standby tries, and fails, to take the Lease.
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*retryPeriod, true, func(context.Context) (bool, error) {
		if holder := leaseHolder(t, client); holder != leader {
			t.Fatalf("the Lease moved from %q to %q while its holder ran", leader, holder)
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		t.Fatal(err)
	}
	if second.logContains("Successfully acquired lease") {
		t.Fatal("the second replica says it acquired the Lease while the first holds it")
	}

	stopped := time.Now()
	if code := first.stop(t); code != 0 {
		t.Errorf("first replica exited with %d on SIGTERM, want 0; log:\n%s", code, first.log())
	}
	next := waitLeaseHolder(t, client, func(h string) bool { return h != "" && h != leader })
	second.waitLog(t, "Successfully acquired lease")
	// Without the release on SIGTERM the standby would wait out the 15 s lease.
	if took := time.Since(stopped); took > 10*time.Second {
		t.Errorf("the standby took the Lease %s after the leader stopped; want it handed over", took)
	}
	t.Logf("Lease held by %q, then by %q", leader, next)
}

// TestRestartedLeaderActsAtOnce kills the leader with SIGKILL, as the OOM
// killer would, and starts it again under the same pod name, as the kubelet
// restarts a container in its pod: with OpenShift's timings (a 137 s Lease)
// it leads again at once, while a replica of another pod, started before it,
// still waits the Lease out.
func TestRestartedLeaderActsAtOnce(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)
	pod := "cluster-network-operator-7c9d5-x2v4k"
	first := startOperator(t, env, []string{operator.PodNameEnv + "=" + pod})
	first.waitLog(t, "Successfully acquired lease")
	first.kill()

	standby := startOperator(t, env, []string{operator.PodNameEnv + "=cluster-network-operator-7c9d5-q8r2m"})
	standby.waitLog(t, "Attempting to acquire leader lease")
	restarted := startOperator(t, env, []string{operator.PodNameEnv + "=" + pod})
	started := time.Now()
	restarted.waitLog(t, "Successfully acquired lease")
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("the restarted leader led %s after it started; want within 5 s", took)
	}
	if holder := leaseHolder(t, client); holder != pod {
		t.Errorf("the Lease is held by %q, want %q", holder, pod)
	}
	if standby.logContains("Successfully acquired lease") {
		t.Error("the standby of another pod took the Lease of a leader that was restarted")
	}
}

type runningOperator struct {
	cmd     *exec.Cmd
	logFile string
	health  string
	metrics string
	done    chan struct{}
}

// startOperator runs the operator against env, with extra flags; environ adds
// environment variables ("RELEASE_VERSION=4.22.0"). Its metrics are served as
// the Deployment's (on all addresses) are, over HTTPS to an authorized token,
// though on a loopback address.
func startOperator(t *testing.T, env *testenv.Env, environ []string, args ...string) *runningOperator {
	t.Helper()
	return startOperatorAs(t, env.Kubeconfig, environ, append([]string{"--metrics-secure=true"}, args...)...)
}

// startOperatorAs runs the operator with a kubeconfig: one of its own, of a
// user whose requests the audit log tells apart (testenv.Env.UserKubeconfig).
func startOperatorAs(t *testing.T, kubeconfig string, environ []string, args ...string) *runningOperator {
	t.Helper()
	health, metrics := freeAddr(t), freeAddr(t)
	logFile := filepath.Join(t.TempDir(), "operator.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(operatorBinary, "start",
		"--kubeconfig="+kubeconfig,
		"--operator-namespace="+operatorNamespace,
		"--health-probe-bind-address="+health,
		"--metrics-bind-address="+metrics)
	cmd.Args = append(cmd.Args, args...)
	cmd.Env = append(append(cmd.Environ(), "GOTRACEBACK=all"), environ...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	op := &runningOperator{cmd: cmd, logFile: logFile, health: health, metrics: metrics, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(op.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			op.dumpGoroutines()
			t.Logf("operator log:\n%s", op.log())
		}
		op.stop(t)
	})
	return op
}

// dumpGoroutines has a running operator write where each of its goroutines
// is to its log, and exit: a story that failed waiting for the operator then
// shows what it was doing. GOTRACEBACK=all, set at its start, includes them all.
func (o *runningOperator) dumpGoroutines() {
	_ = o.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-o.done:
	case <-time.After(10 * time.Second):
	}
}

func (o *runningOperator) waitReady(t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		select {
		case <-o.done:
			return false, errors.New("the operator exited")
		default:
		}
		resp, err := http.Get("http://" + o.health + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("operator not ready: %v\nlog:\n%s", err, o.log())
	}
}

// scrape GETs the operator's /metrics over HTTPS with a bearer token ("" for
// none) and returns the status code and the body, once the endpoint listens.
// The body is not compressed, though asked for gzip as Prometheus asks: a
// deflate writer would cost the operator some 800 KiB of memory.
func (o *runningOperator) scrape(t *testing.T, token string) (int, string) {
	t.Helper()
	code, body, encoding := scrapeEncoded(t, o.metrics, token)
	if encoding != "" {
		t.Errorf("the operator's metrics came with Content-Encoding %q, want none", encoding)
	}
	return code, body
}

// scrapeMetrics GETs https://addr/metrics with a bearer token ("" for none),
// as Prometheus does through a ServiceMonitor, once the endpoint listens. Off
// OpenShift the certificates of the operator, MetalLB and frr-k8s are their
// own, self-signed: there is nothing to verify them against.
func scrapeMetrics(t *testing.T, addr, token string) (int, string) {
	t.Helper()
	code, body, _ := scrapeEncoded(t, addr, token)
	return code, body
}

// scrapeEncoded is scrapeMetrics, asking for gzip, with the answer's
// Content-Encoding.
func scrapeEncoded(t *testing.T, addr, token string) (code int, body, encoding string) {
	t.Helper()
	return scrapeWith(t, addr, token, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
}

// scrapeWith is scrapeEncoded, with the client's TLS configuration.
func scrapeWith(t *testing.T, addr, token string, config *tls.Config) (code int, body, encoding string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: config}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// Set here, Go's transport leaves the body as it comes.
	req.Header.Set("Accept-Encoding", "gzip")
	var raw []byte
	var last error
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := c.Do(req)
		if last = err; err != nil {
			return false, nil // not listening yet
		}
		defer resp.Body.Close()
		code, encoding = resp.StatusCode, resp.Header.Get("Content-Encoding")
		raw, err = io.ReadAll(resp.Body)
		if err == nil && encoding == "gzip" {
			raw, err = gunzip(raw)
		}
		return true, err
	})
	if err != nil {
		t.Fatalf("scraping https://%s/metrics: %v (last: %v)", addr, err, last)
	}
	return code, string(raw), encoding
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func (o *runningOperator) waitLog(t *testing.T, s string) {
	t.Helper()
	o.waitLogCount(t, s, 1)
}

// waitLogCount waits until the operator has logged s n times.
func (o *runningOperator) waitLogCount(t *testing.T, s string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Count(o.log(), s) >= n, nil
	})
	if err != nil {
		t.Fatalf("operator never logged %q %d times\nlog:\n%s", s, n, o.log())
	}
}

// stop sends SIGTERM and returns the exit code.
func (o *runningOperator) stop(t *testing.T) int {
	t.Helper()
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(40 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.done
		t.Errorf("the operator did not stop within 40s of SIGTERM")
	}
	return o.cmd.ProcessState.ExitCode()
}

// kill sends SIGKILL and waits for the process to end.
func (o *runningOperator) kill() {
	_ = o.cmd.Process.Kill()
	<-o.done
}

func (o *runningOperator) log() string {
	b, _ := os.ReadFile(o.logFile)
	return string(b)
}

func (o *runningOperator) logContains(s string) bool { return strings.Contains(o.log(), s) }

func assertJSONLogs(t *testing.T, o *runningOperator) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(o.log()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if entry["msg"] == nil || entry["level"] == nil {
			t.Fatalf("log line lacks msg or level: %q", line)
		}
	}
}

func leaseHolder(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(operatorNamespace).Get(t.Context(), operator.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return holder(lease)
}

func waitLeaseHolder(t *testing.T, client kubernetes.Interface, want func(string) bool) string {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lease, err := client.CoordinationV1().Leases(operatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = holder(lease)
		return got != "" && want(got), nil
	})
	if err != nil {
		t.Fatalf("Lease %s/%s: holder %q: %v", operatorNamespace, operator.LeaseName, got, err)
	}
	return got
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// createNamespaces creates namespaces, as the operator's installation or a user would.
func createNamespaces(t *testing.T, env *testenv.Env, names ...string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(env.Config)
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// runToExit runs the operator and returns its exit code and standard error.
func runToExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(operatorBinary, args...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func assertOneLineError(t *testing.T, stderr, want string) {
	t.Helper()
	if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n") + 1; lines != 1 {
		t.Errorf("stderr has %d lines, want one:\n%s", lines, stderr)
	}
	if !strings.HasPrefix(stderr, "cluster-network-operator: ") || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not say %q", stderr, want)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testenv.ReserveAddr("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// closedPortKubeconfig writes a kubeconfig for an API server that is not there.
func closedPortKubeconfig(t *testing.T) string {
	t.Helper()
	file, err := testenv.ClosedPortKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return file
}
