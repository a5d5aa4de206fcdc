package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// serviceCIDRs are dual-stack, so that Services may ask for either family or
	// both; the IPv6 range is documentation space, as nothing routes ClusterIPs.
	serviceCIDRs = "10.0.0.0/24,2001:db8:ffff::/112"
	serviceIP    = "10.0.0.1" // the first address of the IPv4 range: the kubernetes Service
	// dirPrefix starts the name of every environment's folder under the system's
	// temporary folder; the process id follows, so leftovers can be recognised.
	dirPrefix = "cno-testenv-"
	// portAttempts bounds retries when another process takes a free port between
	// our probe and the component's bind.
	portAttempts = 3
	startTimeout = 60 * time.Second
	stopGrace    = 10 * time.Second
)

// Options choose the components to run beside etcd and kube-apiserver.
type Options struct {
	// ControllerManager runs kube-controller-manager: Deployments, DaemonSets,
	// ReplicaSets, EndpointSlices, garbage collection, service-account tokens.
	ControllerManager bool
	// Scheduler runs kube-scheduler, which binds Pods (DaemonSet pods included) to Nodes.
	Scheduler bool
	// Kwok runs kwok, which plays the kubelet of fake Nodes: Nodes become Ready and
	// keep their Lease, Pods on them become Ready and go when deleted. Nodes given
	// here are created before Start returns; more can be added with AddNodes.
	Kwok  bool
	Nodes []Node
	// KwokIgnoresPods is a label selector of Pods whose status kwok leaves
	// alone: another kubelet stand-in runs them (test/e2e/noderunner).
	KwokIgnoresPods string
	// Address is the host address kube-apiserver listens on and advertises, so
	// that programs in network namespaces reach it; it must exist when Start is
	// called. Default 127.0.0.1.
	Address string
	// Audit makes kube-apiserver log every request's metadata (who, verb,
	// resource, response code) to Env.AuditLog, one JSON event per line.
	Audit bool
}

// Env is a running control plane.
type Env struct {
	// Config is an administrator's (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is a file holding Config, for binaries under test and kubectl.
	Kubeconfig string
	// Dir holds the data, certificates and component logs; it is removed on Stop.
	Dir string
	// AuditLog is kube-apiserver's audit log, with Options.Audit.
	AuditLog string

	pki      *pki
	procs    []*process // in start order
	ports    []int
	stopOnce sync.Once
}

// Start starts a control plane. On error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	removeLeftovers()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	e := &Env{Dir: dir}
	register(e)
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	if e.pki, err = newPKI(dir); err != nil {
		return nil, fmt.Errorf("creating certificates: %v", err)
	}
	address := opts.Address
	if address == "" {
		address = "127.0.0.1"
	}
	if e.pki.serverIP = net.ParseIP(address); e.pki.serverIP == nil {
		return nil, fmt.Errorf("address %q is not an IP address", address)
	}
	etcdURL, err := e.startEtcd()
	if err != nil {
		return nil, err
	}
	if opts.Audit {
		if err := e.writeAuditPolicy(); err != nil {
			return nil, err
		}
	}
	if err := e.startAPIServer(etcdURL, address); err != nil {
		return nil, err
	}
	if opts.ControllerManager {
		if err := e.startControllerManager(); err != nil {
			return nil, err
		}
	}
	if opts.Scheduler {
		if err := e.startScheduler(); err != nil {
			return nil, err
		}
	}
	if opts.Kwok || len(opts.Nodes) > 0 {
		if err := e.startKwok(opts.KwokIgnoresPods); err != nil {
			return nil, err
		}
		if err := e.AddNodes(ctx, opts.Nodes...); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Stop stops every component, newest first, and removes Dir. It is safe to call
// more than once and from several goroutines.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		_ = e.ResumeAPIServer() // a stopped process does not see SIGTERM
		for i := len(e.procs) - 1; i >= 0; i-- {
			e.procs[i].stop(stopGrace)
		}
		_ = os.RemoveAll(e.Dir)
		unregister(e)
	})
}

// describe names the running components, with kube-apiserver's own version.
func (e *Env) describe() string {
	version := "version unknown"
	if client, err := discovery.NewDiscoveryClientForConfig(e.Config); err == nil {
		if v, err := client.ServerVersion(); err == nil {
			version = v.GitVersion
		}
	}
	s := fmt.Sprintf("kube-apiserver %s at %s", version, e.Config.Host)
	for _, p := range e.procs {
		if p.name != "kube-apiserver" {
			s += ", " + p.name
		}
	}
	return s
}

// LogProblems returns, for a failed test, the warnings and errors among the last
// lines of every component's log. Only those: a tool that shows a part of a
// long test output shows its end, and whole logs there would push the test's
// own failure line out of it.
func (e *Env) LogProblems(lines int) string {
	var s string
	for _, p := range e.procs {
		s += fmt.Sprintf("--- %s: warnings and errors in its last %d lines ---\n%s\n", p.name, lines, problems(p.tail(lines)))
	}
	return s
}

func (e *Env) startEtcd() (string, error) {
	bin, err := Binary("etcd")
	if err != nil {
		return "", err
	}
	var url string
	err = e.startOnFreePorts(2, func(ports []int) (*process, error) {
		url = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		p, err := startProcess(e.Dir, "etcd", bin,
			"--data-dir="+filepath.Join(e.Dir, "etcd"),
			"--listen-client-urls="+url, "--advertise-client-urls="+url,
			"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
			"--initial-cluster=default="+peer,
			"--unsafe-no-fsync", // the data is thrown away: durability only costs time
			"--log-level=warn")
		if err != nil {
			return nil, err
		}
		return p, p.waitFor(startTimeout, func() error { return httpOK(url + "/health") })
	})
	return url, err
}

func (e *Env) startAPIServer(etcdURL, address string) error {
	bin, err := Binary("kube-apiserver")
	if err != nil {
		return err
	}
	serverCert, serverKey, err := e.pki.issue("kube-apiserver", true)
	if err != nil {
		return err
	}
	saKey, err := e.pki.signingKey()
	if err != nil {
		return err
	}
	adminCert, adminKey, err := e.pki.issue("testenv-admin", false, "system:masters")
	if err != nil {
		return err
	}
	return e.startOnFreePorts(1, func(ports []int) (*process, error) {
		host := "https://" + net.JoinHostPort(address, strconv.Itoa(ports[0]))
		args := []string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=" + address, "--secure-port=" + strconv.Itoa(ports[0]),
			// v1.37 refuses a loopback advertise address unless it does not
			// reconcile the kubernetes Service's endpoints.
			"--advertise-address=" + address, "--endpoint-reconciler-type=none",
			// No kube-proxy makes Service addresses reachable here: webhooks are
			// called at their Service's endpoints instead.
			"--enable-aggregator-routing=true",
			"--cert-dir=" + e.Dir,
			"--tls-cert-file=" + serverCert, "--tls-private-key-file=" + serverKey,
			"--client-ca-file=" + e.pki.CAFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + saKey, "--service-account-signing-key-file=" + saKey,
			"--service-cluster-ip-range=" + serviceCIDRs,
			"--authorization-mode=RBAC",
			"--allow-privileged=true",
			"--profiling=false"}
		if e.AuditLog != "" {
			args = append(args, "--audit-log-path="+e.AuditLog, "--audit-policy-file="+filepath.Join(e.Dir, "audit-policy.yaml"),
				"--audit-log-mode=blocking") // every event is written before the request returns
		}
		p, err := startProcess(e.Dir, "kube-apiserver", bin, args...)
		if err != nil {
			return nil, err
		}
		e.Config = &rest.Config{
			Host:            host,
			TLSClientConfig: rest.TLSClientConfig{CAFile: e.pki.CAFile, CertFile: adminCert, KeyFile: adminKey},
			QPS:             100,
			Burst:           200,
		}
		if e.Kubeconfig, err = e.writeKubeconfig("admin", adminCert, adminKey); err != nil {
			return p, err
		}
		return p, p.waitFor(startTimeout, e.apiServerReady)
	})
}

// writeAuditPolicy logs the metadata of every request, once it is answered.
func (e *Env) writeAuditPolicy() error {
	e.AuditLog = filepath.Join(e.Dir, "audit.log")
	return os.WriteFile(filepath.Join(e.Dir, "audit-policy.yaml"), []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
`), 0o600)
}

func (e *Env) apiServerReady() error {
	client, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	return getOK(client, e.Config.Host+"/readyz")
}

func (e *Env) startControllerManager() error {
	bin, err := Binary("kube-controller-manager")
	if err != nil {
		return err
	}
	kubeconfig, err := e.clientKubeconfig("system:kube-controller-manager")
	if err != nil {
		return err
	}
	p, err := startProcess(e.Dir, "kube-controller-manager", bin,
		"--kubeconfig="+kubeconfig,
		"--controllers=*", "--leader-elect=false",
		"--secure-port=0", // no health endpoint: readiness is judged from its work
		"--service-account-private-key-file="+filepath.Join(e.Dir, "service-account.key"),
		"--root-ca-file="+e.pki.CAFile,
		// Defaults (20/30) make rollouts over many nodes wait on the client's rate limiter.
		"--kube-api-qps=200", "--kube-api-burst=400")
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	// The service-account controller creating "default" in kube-system shows that
	// the controllers run.
	return p.waitFor(startTimeout, func() error { return e.exists("/api/v1/namespaces/kube-system/serviceaccounts/default") })
}

func (e *Env) startScheduler() error {
	bin, err := Binary("kube-scheduler")
	if err != nil {
		return err
	}
	kubeconfig, err := e.clientKubeconfig("system:kube-scheduler")
	if err != nil {
		return err
	}
	config := filepath.Join(e.Dir, "kube-scheduler.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
`, kubeconfig)), 0o600); err != nil {
		return err
	}
	p, err := startProcess(e.Dir, "kube-scheduler", bin, "--config="+config, "--secure-port=0")
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	// The scheduler serves nothing here; give it a moment to fail on a bad
	// configuration before the caller relies on it.
	return p.waitFor(startTimeout, p.upFor(time.Second))
}

func (e *Env) startKwok(ignorePods string) error {
	bin, err := Binary("kwok")
	if err != nil {
		return err
	}
	kubeconfig, err := e.clientKubeconfig("kwok")
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + kubeconfig,
		"--config=" + filepath.Join(filepath.Dir(bin), "kwok-stages.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16"}
	if ignorePods != "" {
		args = append(args, "--disregard-status-with-label-selector="+ignorePods)
	}
	p, err := startProcess(e.Dir, "kwok", bin, args...)
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	return p.waitFor(startTimeout, p.upFor(time.Second))
}

// startOnFreePorts starts a component on n free loopback ports, and again on new
// ones if another process took one first.
func (e *Env) startOnFreePorts(n int, start func(ports []int) (*process, error)) error {
	var err error
	for attempt := 0; attempt < portAttempts; attempt++ {
		ports, perr := freePorts(n)
		if perr != nil {
			return perr
		}
		var p *process
		p, err = start(ports)
		if p != nil {
			e.procs = append(e.procs, p)
		}
		if err == nil {
			e.ports = append(e.ports, ports...)
			return nil
		}
		if p == nil || !p.logContains("address already in use") {
			return err
		}
		p.stop(stopGrace)
	}
	return err
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// clientKubeconfig issues a client certificate for a component (an administrator:
// the components here are trusted) and writes its kubeconfig.
func (e *Env) clientKubeconfig(user string) (string, error) {
	cert, key, err := e.pki.issue(user, false, "system:masters")
	if err != nil {
		return "", err
	}
	return e.writeKubeconfig(user, cert, key)
}

func (e *Env) writeKubeconfig(user, cert, key string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthority: e.pki.CAFile}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: user}
	cfg.CurrentContext = "testenv"
	file := filepath.Join(e.Dir, filepath.Base(user)+".kubeconfig")
	return file, clientcmd.WriteToFile(*cfg, file)
}

// exists tells whether a GET of path succeeds.
func (e *Env) exists(path string) error {
	client, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	return getOK(client, e.Config.Host+path)
}

func httpOK(url string) error { return getOK(http.DefaultClient, url) }

func getOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// PauseAPIServer stops kube-apiserver with SIGSTOP: it keeps its connections
// and its port, and answers nothing, as an API server that hangs or a control
// plane cut off by the network does. ResumeAPIServer continues it. A paused
// API server is resumed before Stop stops it.
func (e *Env) PauseAPIServer() error { return e.signal("kube-apiserver", syscall.SIGSTOP) }

// ResumeAPIServer continues a paused kube-apiserver.
func (e *Env) ResumeAPIServer() error { return e.signal("kube-apiserver", syscall.SIGCONT) }

func (e *Env) signal(name string, sig syscall.Signal) error {
	for _, p := range e.procs {
		if p.name == name {
			if p.exited() {
				return p.failure(fmt.Errorf("cannot send %s", sig))
			}
			return syscall.Kill(-p.cmd.Process.Pid, sig)
		}
	}
	return fmt.Errorf("no %s in this environment", name)
}
