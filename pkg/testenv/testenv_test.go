package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// controller-runtime's clients and managers here log through the tests or
// not at all; without a root logger each prints a stack saying none was set.
func init() { crlog.SetLogger(logr.Discard()) }

func TestStopLeavesNoProcessesPortsOrFiles(t *testing.T) {
	e := New(t, Options{ControllerManager: true, Scheduler: true, Nodes: Nodes(1)})

	// Every component's command line names a file in Dir; the ports are those
	// it was told to listen on.
	var ports []int
	pids := findProcesses(func(args []string) bool {
		if !slices.ContainsFunc(args, func(arg string) bool { return strings.Contains(arg, e.Dir+"/") }) {
			return false
		}
		ports = append(ports, listenPorts(t, args)...)
		return true
	})
	if len(pids) != 5 {
		t.Fatalf("want etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok running, got %d processes", len(pids))
	}
	if len(ports) != 3 {
		t.Fatalf("want etcd's two ports and kube-apiserver's, got %v", ports)
	}

	e.Stop()

	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill -0: %v)", pid, err)
		}
	}
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("port %d is still taken after Stop: %v", port, err)
			continue
		}
		l.Close()
	}
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("data folder %s still exists after Stop (stat: %v)", e.Dir, err)
	}
}

// listenPorts returns the ports in etcd's listen URLs and a secure port other than 0.
func listenPorts(t *testing.T, args []string) []int {
	t.Helper()
	var ports []int
	for _, arg := range args {
		flag, value, _ := strings.Cut(arg, "=")
		switch flag {
		case "--listen-client-urls", "--listen-peer-urls":
			u, err := url.Parse(value)
			if err != nil {
				t.Fatal(err)
			}
			value = u.Port()
		case "--secure-port":
		default:
			continue
		}
		if port, err := strconv.Atoi(value); err != nil {
			t.Fatalf("%s: %v", arg, err)
		} else if port != 0 {
			ports = append(ports, port)
		}
	}
	return ports
}

func TestFailedStartShowsTheComponentLog(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kube-scheduler: not run with -short")
	}
	bin, err := Binary("kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess(t.TempDir(), "kube-scheduler", bin, "--no-such-flag")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(time.Second)

	err = p.waitFor(10*time.Second, func() error { return errors.New("never ready") })
	if err == nil {
		t.Fatal("waitFor succeeded for a process that cannot start")
	}
	for _, want := range []string{"exited before it was ready", "last lines of", "no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

// A test binary killed outright leaves etcd running, as envtest starts it
// without a parent-death signal: the next start kills it and removes its folder.
func TestLeftoversOfAKilledRunAreRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd: not run with -short")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, gone.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := Binary("etcd")
	if err != nil {
		t.Fatal(err)
	}
	client, peer := freeURL(t), freeURL(t)
	etcd := exec.Command(bin, "--data-dir="+filepath.Join(dir, "etcd"), "--listen-client-urls="+client,
		"--advertise-client-urls="+client, "--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer)
	if err := etcd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- etcd.Wait() }()

	removeLeftovers()

	select {
	case err := <-exited:
		if status, ok := etcd.ProcessState.Sys().(syscall.WaitStatus); !ok || status.Signal() != syscall.SIGKILL {
			t.Errorf("etcd ended by %v, not by SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		_ = etcd.Process.Kill()
		t.Fatal("the leftover etcd still runs after removeLeftovers")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("leftover folder %s still exists (stat: %v)", dir, err)
	}
}

func freeURL(t *testing.T) string {
	t.Helper()
	port, err := ReservePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

// kube-apiserver serves on the address asked for, under a certificate valid
// for it, and a paused one answers nothing until resumed.
func TestAddressAndPause(t *testing.T) {
	e := New(t, Options{Address: "127.0.0.2"})
	if want := "https://127.0.0.2:"; !strings.HasPrefix(e.Config.Host, want) {
		t.Fatalf("kube-apiserver at %s, want %s…", e.Config.Host, want)
	}
	if err := e.exists("/api/v1/namespaces/default"); err != nil {
		t.Fatal(err)
	}

	if err := e.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	paused := rest.CopyConfig(e.Config)
	paused.Timeout = time.Second
	client, err := rest.HTTPClientFor(paused)
	if err != nil {
		t.Fatal(err)
	}
	if err := getOK(client, e.Config.Host+"/readyz"); err == nil {
		t.Error("a paused kube-apiserver answered")
	}
	if err := e.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := e.exists("/api/v1/namespaces/default"); err != nil {
		t.Errorf("after resuming: %v", err)
	}
}

// kube-apiserver restarted, then etcd: what was written is kept, the same
// client (its credentials, the server's certificate) works again, and an
// informer's cache catches up with what changed meanwhile.
func TestRestartsKeepTheCluster(t *testing.T) {
	e := New(t, Options{})
	client := kubernetes.NewForConfigOrDie(e.Config)
	cms := client.CoreV1().ConfigMaps(metav1.NamespaceDefault)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(metav1.NamespaceDefault))
	informer := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	for i, restart := range []func() error{func() error { return e.RestartAPIServer(0) }, e.RestartEtcd} {
		name := fmt.Sprintf("before-%d", i)
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := restart(); err != nil {
			t.Fatal(err)
		}
		after := fmt.Sprintf("after-%d", i)
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: after}}, metav1.CreateOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("restart %d: the client did not write again within a minute", i)
		}
		if _, err := cms.Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("restart %d: %s is gone: %v", i, name, err)
		}
		err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			_, exists, _ := informer.GetStore().GetByKey(metav1.NamespaceDefault + "/" + after)
			return exists, nil
		})
		if err != nil {
			t.Errorf("restart %d: the informer did not see %s within a minute", i, after)
		}
	}
}
