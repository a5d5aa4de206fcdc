package testenv

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// serviceCIDRs are dual-stack, so that Services may ask for either family or
	// both; the IPv6 range is documentation space, as nothing routes ClusterIPs.
	serviceCIDRs = "10.0.0.0/24,2001:db8:ffff::/112"
	// dirPrefix starts the name of every environment's folder under the system's
	// temporary folder; the process id follows, so leftovers can be recognised.
	dirPrefix = "cno-testenv-"
	// portAttempts bounds retries when another process takes a free port between
	// the probe and the component's bind.
	portAttempts = 3
	startTimeout = 60 * time.Second
	stopGrace    = 10 * time.Second
	// stopWait bounds the wait for a SIGSTOPped process to have stopped.
	stopWait = 5 * time.Second
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
	// PodsReadyAfter is how long kwok waits before it makes a new pod running
	// and ready. By default it does at once, where a kubelet starts the
	// containers and waits for a readiness probe's initial delay (10 s for
	// MetalLB's speaker); a story that needs its rollouts to outlast what it
	// injects sets it (kwokStages).
	PodsReadyAfter time.Duration
	// Address is the host address kube-apiserver listens on and advertises, so
	// that programs in network namespaces reach it; it must exist when Start is
	// called. Default 127.0.0.1.
	Address string
	// Audit makes kube-apiserver log every request's metadata (who, verb,
	// resource, response code) to Env.AuditLog, one JSON event per line.
	Audit bool
	// SCCAdmission admits pods as OpenShift does: OpenShift's SCC API and
	// default SCCs, the namespaces' UID ranges, and OpenShift's own SCC
	// admission plugin in front of every pod's creation (startSCCAdmission).
	// kube-controller-manager then creates pods under each controller's own
	// service account, as on OpenShift, which may use no SCC but those every
	// account may use.
	SCCAdmission bool
	// AuditUsers, when set, narrows the audit log to these users' requests:
	// on a cluster of thousands of kwok nodes, their Lease renewals alone
	// would be hundreds of events a second.
	AuditUsers []string
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

	plane    *envtest.ControlPlane // etcd and kube-apiserver
	procs    []*process            // the other components, in start order
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
	if err := e.startControlPlane(ctx, opts); err != nil {
		return nil, err
	}
	if opts.SCCAdmission {
		if err := e.startSCCAdmission(ctx); err != nil {
			return nil, err
		}
	}
	if opts.ControllerManager {
		if err := e.startControllerManager(opts.SCCAdmission); err != nil {
			return nil, err
		}
	}
	if opts.Scheduler {
		if err := e.startScheduler(); err != nil {
			return nil, err
		}
	}
	if opts.Kwok || len(opts.Nodes) > 0 {
		if err := e.startKwok(opts.KwokIgnoresPods, opts.PodsReadyAfter); err != nil {
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
		if e.plane != nil {
			_ = e.plane.Stop() // kube-apiserver, then etcd
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
	s := fmt.Sprintf("kube-apiserver %s at %s, etcd", version, e.Config.Host)
	for _, p := range e.procs {
		s += ", " + p.name
	}
	return s
}

// LogProblems returns, for a failed test, the warnings and errors among the last
// lines of every component's log. Only those: a tool that shows a part of a
// long test output shows its end, and whole logs there would push the test's
// own failure line out of it.
func (e *Env) LogProblems(lines int) string {
	names := []string{"etcd", "kube-apiserver"}
	for _, p := range e.procs {
		names = append(names, p.name)
	}
	var s string
	for _, name := range names {
		s += fmt.Sprintf("--- %s: warnings and errors in its last %d lines ---\n%s\n", name, lines, problems(TailFile(e.logFile(name), lines)))
	}
	return s
}

// logFile is where a component's output goes.
func (e *Env) logFile(name string) string { return filepath.Join(e.Dir, name+".log") }

// startControllerManager runs kube-controller-manager; with
// serviceAccounts each controller acts as its own service account
// (system:serviceaccount:kube-system:daemon-set-controller, ...), as on real
// clusters, and not as the administrator it runs as.
func (e *Env) startControllerManager(serviceAccounts bool) error {
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
		// The key envtest writes beside kube-apiserver's certificates, and
		// whose public half kube-apiserver checks tokens with.
		"--service-account-private-key-file="+filepath.Join(e.plane.APIServer.CertDir, "sa-signer.key"),
		"--root-ca-file="+e.Config.CAFile,
		// Defaults (20/30) make rollouts over many nodes wait on the client's rate limiter.
		"--kube-api-qps=200", "--kube-api-burst=400",
		fmt.Sprintf("--use-service-account-credentials=%t", serviceAccounts))
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

// podReadyAgain is a kwok stage beside those of kwok's release: a running pod
// marked not ready by kube-controller-manager is made ready again, as its
// node's kubelet would report it once the node is back.
//
//go:embed kwok/pod-ready-again.yaml
var podReadyAgain []byte

func (e *Env) startKwok(ignorePods string, podsReadyAfter time.Duration) error {
	bin, err := Binary("kwok")
	if err != nil {
		return err
	}
	kubeconfig, err := e.clientKubeconfig("kwok")
	if err != nil {
		return err
	}
	stagesFile, err := e.kwokStages(filepath.Join(filepath.Dir(bin), "kwok-stages.yaml"), podsReadyAfter)
	if err != nil {
		return err
	}
	readyAgain := filepath.Join(e.Dir, "kwok-pod-ready-again.yaml")
	if err := os.WriteFile(readyAgain, podReadyAgain, 0o600); err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + kubeconfig,
		"--config=" + stagesFile, "--config=" + readyAgain,
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

// UserKubeconfig provisions an administrator of its own name, whose
// requests the audit log tells apart, and writes its kubeconfig.
func (e *Env) UserKubeconfig(user string) (string, error) { return e.clientKubeconfig(user) }

// clientKubeconfig provisions a user for a component (an administrator: the
// components here are trusted) and writes its kubeconfig.
func (e *Env) clientKubeconfig(user string) (string, error) {
	u, err := e.plane.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	return e.writeKubeconfig(user, u.Config())
}

// writeKubeconfig writes a kubeconfig of a user's client certificate.
func (e *Env) writeKubeconfig(user string, c *rest.Config) (string, error) {
	file := filepath.Join(e.Dir, filepath.Base(user)+".kubeconfig")
	return file, WriteKubeconfig(file, &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthority: e.Config.CAFile},
		&clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData})
}

// WriteKubeconfig writes a kubeconfig of one cluster and one user, whose
// cluster is named testenv (envtest's own writer names it envtest).
func WriteKubeconfig(file string, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = cluster
	cfg.AuthInfos["user"] = user
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "user"}
	cfg.CurrentContext = "testenv"
	return clientcmd.WriteToFile(*cfg, file)
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
