package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startControlPlane starts etcd and kube-apiserver with envtest, and again on
// new ports if another process took one first: envtest picks free ports but
// does not retry when it loses one.
func (e *Env) startControlPlane(ctx context.Context, opts Options) error {
	address := opts.Address
	if address == "" {
		address = "127.0.0.1"
	}
	if net.ParseIP(address) == nil {
		return fmt.Errorf("address %q is not an IP address", address)
	}
	if opts.Audit {
		if err := e.writeAuditPolicy(opts.AuditUsers); err != nil {
			return err
		}
	}
	release, err := takeStartSlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	for range portAttempts {
		if err = e.startEtcdAndAPIServer(address); err == nil || !e.lostPortRace() {
			break
		}
	}
	if err != nil {
		return err
	}
	return e.connect(ctx)
}

// startEtcdAndAPIServer runs envtest's control plane from the pinned binaries,
// each component's output in Dir/<name>.log.
func (e *Env) startEtcdAndAPIServer(address string) error {
	etcd, err := Binary("etcd")
	if err != nil {
		return err
	}
	apiServer, err := Binary("kube-apiserver")
	if err != nil {
		return err
	}
	// kube-apiserver listens on address, which envtest's own port pick ignores.
	port, err := ReservePort(address)
	if err != nil {
		return err
	}
	etcdURL, err := reserveURL()
	if err != nil {
		return err
	}
	// A fresh folder per attempt: envtest reuses certificates it finds and
	// then does not know their CA.
	certDir, dataDir := filepath.Join(e.Dir, "kube-apiserver"), filepath.Join(e.Dir, "etcd")
	for _, dir := range []string{certDir, dataDir} {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.Mkdir(certDir, 0o700); err != nil {
		return err
	}
	etcdLog, err := os.Create(e.logFile("etcd"))
	if err != nil {
		return err
	}
	defer etcdLog.Close() // the process has its own copy once started
	apiServerLog, err := os.Create(e.logFile("kube-apiserver"))
	if err != nil {
		return err
	}
	defer apiServerLog.Close()
	plane := &envtest.ControlPlane{
		Etcd: &envtest.Etcd{Path: etcd, DataDir: dataDir, Out: etcdLog, Err: etcdLog, URL: etcdURL,
			StartTimeout: startTimeout, StopTimeout: stopGrace},
		APIServer: &envtest.APIServer{Path: apiServer, CertDir: certDir, Out: apiServerLog, Err: apiServerLog,
			StartTimeout: startTimeout, StopTimeout: stopGrace,
			SecureServing: envtest.SecureServing{ListenAddr: envtest.ListenAddr{Address: address, Port: strconv.Itoa(port)}}},
	}
	plane.Etcd.Configure().
		Set("unsafe-no-fsync", "true"). // the data is thrown away: durability only costs time
		Set("log-level", "warn")
	e.configureAPIServer(plane.APIServer.Configure(), address)
	if err := plane.Start(); err != nil {
		return e.startFailure(err)
	}
	e.plane = plane
	return nil
}

// configureAPIServer sets the flags that differ from envtest's defaults, and
// those the tests rely on, whatever envtest's defaults become.
func (e *Env) configureAPIServer(args *envtest.Arguments, address string) {
	args.
		// v1.37 refuses a loopback advertise address unless it does not
		// reconcile the kubernetes Service's endpoints.
		Set("advertise-address", address).Set("endpoint-reconciler-type", "none").
		// No kube-proxy makes Service addresses reachable here: webhooks are
		// called at their Service's endpoints instead.
		Set("enable-aggregator-routing", "true").
		Set("service-account-issuer", "https://kubernetes.default.svc").
		Set("service-cluster-ip-range", serviceCIDRs).
		Set("authorization-mode", "RBAC").
		Set("allow-privileged", "true").
		Set("profiling", "false").
		// envtest turns the ServiceAccount admission plugin off, as it runs no
		// controller to create service accounts; Pods here get theirs as in a cluster.
		Disable("disable-admission-plugins")
	if e.AuditLog != "" {
		args.Set("audit-log-path", e.AuditLog).Set("audit-policy-file", filepath.Join(e.Dir, "audit-policy.yaml")).
			Set("audit-log-mode", "blocking") // every event is written before the request returns
	}
}

// connect writes the API server's CA for the clients and controller manager,
// provisions the administrator and waits until kube-apiserver is ready.
func (e *Env) connect(ctx context.Context) error {
	caFile := filepath.Join(e.Dir, "ca.crt")
	if err := os.WriteFile(caFile, e.plane.APIServer.SecureServing.CA, 0o600); err != nil {
		return err
	}
	admin, err := e.plane.AddUser(envtest.User{Name: "testenv-admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: 100, Burst: 200})
	if err != nil {
		return err
	}
	e.Config = rest.CopyConfig(admin.Config())
	// The CA by file, which callers hand on (a webhook's caBundle, kubeconfigs).
	e.Config.CAFile, e.Config.CAData = caFile, nil
	// A host without envtest's trailing slash, so that Host+path is a URL.
	e.Config.Host = strings.TrimSuffix(e.Config.Host, "/")
	if e.Kubeconfig, err = e.writeKubeconfig("admin", e.Config); err != nil {
		return err
	}
	// envtest waits for /healthz, which passes before kube-apiserver has
	// synced its informers; /readyz waits for those too.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(context.Context) (bool, error) {
		last = e.exists("/readyz")
		return last == nil, nil
	})
	if err != nil {
		return e.startFailure(fmt.Errorf("kube-apiserver not ready: %v (%v)", last, err))
	}
	return nil
}

// startFailure adds to an error the end of the log of the component it names,
// and of etcd's too when kube-apiserver could not start: it may not have
// reached etcd.
func (e *Env) startFailure(err error) error {
	var names []string
	switch {
	case strings.Contains(err.Error(), "kube-apiserver"):
		names = []string{"kube-apiserver", "etcd"}
	case strings.Contains(err.Error(), "etcd"):
		names = []string{"etcd"}
	}
	for _, name := range names {
		err = fmt.Errorf("%w\n--- last lines of %s ---\n%s", err, e.logFile(name), TailFile(e.logFile(name), 30))
	}
	return err
}

// lostPortRace tells whether etcd or kube-apiserver failed to bind its port.
func (e *Env) lostPortRace() bool {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if data, err := os.ReadFile(e.logFile(name)); err == nil && strings.Contains(string(data), "address already in use") {
			return true
		}
	}
	return false
}

// reserveURL is a local URL for etcd's clients: envtest would pick a port in
// the ephemeral range (ReservePort says why not).
func reserveURL() (*url.URL, error) {
	addr, err := ReserveAddr("127.0.0.1")
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "http", Host: addr}, nil
}

// writeAuditPolicy logs the metadata of every request of users (of every
// user when none is given) once it is answered, and of a watch also when it
// starts: an open watch is a cache kept.
func (e *Env) writeAuditPolicy(users []string) error {
	e.AuditLog = filepath.Join(e.Dir, "audit.log")
	policy := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`
	if len(users) > 0 {
		quoted, err := json.Marshal(users) // a YAML flow sequence
		if err != nil {
			return err
		}
		policy += "  users: " + string(quoted) + "\n- level: None\n"
	}
	return os.WriteFile(filepath.Join(e.Dir, "audit-policy.yaml"), []byte(policy), 0o600)
}

// PauseAPIServer stops kube-apiserver with SIGSTOP: it keeps its connections
// and its port, and answers nothing, as an API server that hangs or a control
// plane cut off by the network does. ResumeAPIServer continues it. A paused
// API server is resumed before Stop stops it.
func (e *Env) PauseAPIServer() error { return e.signalAPIServer(syscall.SIGSTOP) }

// ResumeAPIServer continues a paused kube-apiserver.
func (e *Env) ResumeAPIServer() error { return e.signalAPIServer(syscall.SIGCONT) }

// signalAPIServer signals kube-apiserver's process group. envtest keeps the
// process to itself, so it is found by its command line: the binary with this
// environment's certificate folder.
func (e *Env) signalAPIServer(sig syscall.Signal) error {
	if e.plane == nil {
		return fmt.Errorf("no kube-apiserver in this environment")
	}
	s := e.plane.APIServer
	pids := findProcesses(func(args []string) bool {
		return args[0] == s.Path && slices.Contains(args, "--cert-dir="+s.CertDir)
	})
	if len(pids) != 1 {
		return fmt.Errorf("cannot send %s: %d kube-apiserver processes run with --cert-dir=%s\n--- last lines of %s ---\n%s",
			sig, len(pids), s.CertDir, e.logFile("kube-apiserver"), TailFile(e.logFile("kube-apiserver"), 30))
	}
	// envtest starts each component as its own process group.
	if err := syscall.Kill(-pids[0], sig); err != nil || sig != syscall.SIGSTOP {
		return err
	}
	return waitStopped(pids[0])
}

// waitStopped waits until every thread of a process is stopped. A SIGSTOP is
// taken by one thread, which then stops the others: on a busy machine the
// rest may go on answering requests for a while after kill returns.
func waitStopped(pid int) error {
	return wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, stopWait, true, func(context.Context) (bool, error) {
		stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(stats) == 0 {
			return false, fmt.Errorf("reading the threads of process %d: %v", pid, err)
		}
		for _, stat := range stats {
			data, err := os.ReadFile(stat)
			if err != nil {
				return false, nil // a thread that ended meanwhile
			}
			// "pid (comm) state ...": comm may hold spaces and parentheses.
			rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
			if fields := strings.Fields(rest); len(fields) == 0 || (fields[0] != "T" && fields[0] != "t") {
				return false, nil
			}
		}
		return true, nil
	})
}

// RestartAPIServer stops kube-apiserver (SIGTERM, as a control plane node's
// restart does), leaves it down for down, and starts it again on the same
// port, with the same certificates, flags and etcd: until it is back its
// clients' connections are refused, and their watches end.
func (e *Env) RestartAPIServer(down time.Duration) error {
	if e.plane == nil {
		return fmt.Errorf("no kube-apiserver in this environment")
	}
	s := e.plane.APIServer
	start := func() error {
		<-time.After(down) // the outage is the fault injected
		return s.Start()
	}
	return e.restart("kube-apiserver", s.Path, "--cert-dir="+s.CertDir, s.Stop, func(log *os.File) { s.Out, s.Err = log, log }, start)
}

// RestartEtcd stops etcd and starts it again, at the same address and with
// its data: kube-apiserver's requests fail until it is back, and its watches
// of etcd start again.
func (e *Env) RestartEtcd() error {
	if e.plane == nil {
		return fmt.Errorf("no etcd in this environment")
	}
	d := e.plane.Etcd
	return e.restart("etcd", d.Path, "--data-dir="+d.DataDir, d.Stop, func(log *os.File) { d.Out, d.Err = log, log }, d.Start)
}

// restart stops a component of envtest's control plane, which kills what
// does not stop within stopGrace (kube-apiserver draining its clients'
// requests may take longer), waits until its process (binary with arg) is
// gone, and starts it again, writing to its log as before.
func (e *Env) restart(name, binary, arg string, stop func() error, setLog func(*os.File), start func() error) error {
	_ = stop() // a kill after stopGrace is said as an error: the process is gone either way
	if err := e.waitGone(binary, arg); err != nil {
		return err
	}
	log, err := os.OpenFile(e.logFile(name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer log.Close() // the process has its own copy once started
	setLog(log)
	if err := start(); err != nil {
		return fmt.Errorf("starting %s again: %w\n%s", name, err, TailFile(e.logFile(name), 30))
	}
	return nil
}

// waitGone waits until no process of binary runs with arg: a process envtest
// stopped or killed has left its ports.
func (e *Env) waitGone(binary, arg string) error {
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, stopWait, true, func(context.Context) (bool, error) {
		return len(findProcesses(func(args []string) bool { return args[0] == binary && slices.Contains(args, arg) })) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s still runs %s after it was stopped", filepath.Base(binary), arg, stopWait)
	}
	return nil
}
