package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The operator, installed from the manifests with its default Lease timings,
// rides out a minute in which kube-apiserver answers nothing (stopped with
// SIGSTOP: connections stay open, requests hang): it never exits; once the
// API server is back it writes nothing again (nothing changed: by the audit
// log, only its Lease), and acts at once on what does change, restoring a
// deleted speaker DaemonSet within 5 s.
//
// The outage is the fault injected, not a wait: a minute is longer than
// client-go's check of an idle connection (30 s without a frame, then a ping
// unanswered for 15 s), so the operator's connections are found dead and
// dialled again, and shorter than the Lease's renew deadline (107 s).
func TestOperatorRidesOutAnAPIServerOutage(t *testing.T) {
	ridesOut(t, func(env *testenv.Env, op *runningOperator) {
		if err := env.PauseAPIServer(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-op.done:
			_ = env.ResumeAPIServer()
			t.Fatalf("the operator exited during the outage; log:\n%s", op.log())
		case <-time.After(outage):
		}
		if err := env.ResumeAPIServer(); err != nil {
			t.Fatal(err)
		}
	})
}

// The same with kube-apiserver restarted, down a minute (issue 45): every
// connection refused meanwhile, every watch ended, the Lease unrenewed for
// longer than the minute; the operator never exits, leads on, writes nothing
// once the API server is back, and acts at once.
func TestOperatorRidesOutAnAPIServerRestart(t *testing.T) {
	ridesOut(t, func(env *testenv.Env, _ *runningOperator) {
		if err := env.RestartAPIServer(outage); err != nil {
			t.Fatal(err)
		}
	})
}

// ridesOut runs the outage stories: the operator installed and MetalLB
// active, fault takes kube-apiserver away and brings it back.
func ridesOut(t *testing.T, fault func(*testenv.Env, *runningOperator)) {
	world.SideBySide(t, world.Long)
	env := testenv.New(t, testenv.Options{Audit: true})
	client := kubernetes.NewForConfigOrDie(env.Config)
	kubectl(t, env, "apply", "-k", manifestsDir)
	op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+serviceAccountKubeconfig(t, env), "--platform=BareMetal")
	op.waitReady(t)
	applyOnceServed(t, env, guideExample(t, "activate"))
	waitSpeaker(t, client, "")
	waitQuiet(t, env) // no write of the operator's held over the outage

	fault(env, op)
	back := time.Now()
	ds, err := client.AppsV1().DaemonSets("metallb-system").Get(t.Context(), "speaker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitQuiet(t, env)
	assertNoWritesSince(t, env, back)
	if err := client.AppsV1().DaemonSets("metallb-system").Delete(t.Context(), "speaker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitSpeaker(t, client, string(ds.UID))
	took := time.Since(deleted)
	if took > 5*time.Second {
		t.Errorf("the deleted speaker DaemonSet came back %s after the API server returned; want within 5s", took)
	}
	t.Logf("the API server back, the operator wrote nothing; the deleted speaker DaemonSet came back %s after its deletion", took.Round(time.Millisecond))
	select {
	case <-op.done:
		t.Fatalf("the operator exited; log:\n%s", op.log())
	default:
	}
}

// Started while kube-apiserver answers nothing, the operator waits, saying so
// every few seconds, and once the API server is back it works.
func TestOperatorStartedDuringAnOutageWaits(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)
	if err := env.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--platform=BareMetal")
	t.Cleanup(func() { _ = env.ResumeAPIServer() }) // when the wait below fails
	op.waitLog(t, "waiting for the Kubernetes API server")
	op.waitLogCount(t, "waiting for the Kubernetes API server", 2) // and says it again
	select {
	case <-op.done:
		t.Fatalf("the operator exited while the API server was down; log:\n%s", op.log())
	default:
	}
	if err := env.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	op.waitReady(t)
	applyOnceServed(t, env, guideExample(t, "activate"))
	waitSpeaker(t, client, "")
}

// Started through a proxy that fails the first try of every request it
// makes (a 500, a 409, a lost connection, a 503 or a 429, in turn), the
// namespace's read, discovery, the count of control-plane nodes and the
// install of the MetalLB object's CRD among them, the operator never exits:
// it tries each step again, and activates MetalLB within activateThroughFaults
// of the configuration's creation.
func TestOperatorStartsThroughFaults(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)
	faults := testenv.NewFaults(testenv.FaultSeed(t), testenv.FaultRates{FailFirstTries: 1})
	op := startOperatorAs(t, testenv.ServeWithFaults(t, env.Kubeconfig, faults), cluster.Release("4.22.0", release.MetalLB), "--platform=BareMetal")
	op.waitReady(t)
	created := time.Now()
	applyOnceServed(t, env, guideExample(t, "activate"))
	waitSpeaker(t, client, "")
	if took := time.Since(created); took > activateThroughFaults {
		t.Errorf("MetalLB activated %s after its configuration was created; want within %s", took, activateThroughFaults)
	}
	select {
	case <-op.done:
		t.Fatalf("the operator exited; log:\n%s", op.log())
	default:
	}
	failed := faults.Seen().FailedFirst
	for _, step := range []string{"GET /version", "GET /api/v1/namespaces/" + operatorNamespace + " ", "GET /api ", "GET /apis ",
		"GET /api/v1/nodes ", "PATCH /apis/apiextensions.k8s.io/v1/customresourcedefinitions/metallbs.metallb.io ", "POST /apis/coordination.k8s.io/v1/namespaces/" + operatorNamespace + "/leases "} {
		if !slices.ContainsFunc(failed, func(f string) bool { return strings.HasPrefix(f, step) }) {
			t.Errorf("no request %q failed; the requests failed: %q", step, failed)
		}
	}
	t.Logf("%s; activated %s after the configuration was created", faults.Seen(), time.Since(created).Round(time.Millisecond))
}

// activateThroughFaults bounds the activation when every request fails once.
const activateThroughFaults = 30 * time.Second

// outage is how long kube-apiserver answers nothing in the outage story.
const outage = time.Minute

// quietFor is how long the operator must have written nothing to count as
// idle, no write still due.
const quietFor = metallb.QuietAfter

// waitQuiet waits until the operator has written nothing for quietFor.
func waitQuiet(t *testing.T, env *testenv.Env) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, false, func(context.Context) (bool, error) {
		writes := operatorWrites(readAudit(t, env.AuditLog, operatorAccount))
		return len(writes) == 0 || time.Since(writes[len(writes)-1].Received) > quietFor, nil
	})
	if err != nil {
		t.Fatalf("the operator never stopped writing: %v", err)
	}
}

// assertNoWritesSince fails on any write the operator made since a time.
func assertNoWritesSince(t *testing.T, env *testenv.Env, since time.Time) {
	t.Helper()
	for _, r := range operatorWrites(readAudit(t, env.AuditLog, operatorAccount)) {
		if !r.Received.Before(since) {
			t.Errorf("the operator wrote again after the outage, with nothing changed: %s %s at %s", r, r.Name, r.Received.Format(time.StampMilli))
		}
	}
}

// operatorWrites are the writes among requests, but those to the Lease and
// Events. A write refused for a conflict (one worked out from a cache behind
// the last write) changed nothing, and is no write.
func operatorWrites(requests []request) []request {
	var writes []request
	for _, r := range requests {
		if r.IsWrite() && r.Code != http.StatusConflict && r.Resource != "leases" && r.Resource != "events" {
			writes = append(writes, r)
		}
	}
	return writes
}

// waitSpeaker waits until the speaker DaemonSet exists, as another object
// than the one of UID old, if given.
func waitSpeaker(t *testing.T, client kubernetes.Interface, old string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ds, err := client.AppsV1().DaemonSets("metallb-system").Get(ctx, "speaker", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && string(ds.UID) != old, err
	})
	if err != nil {
		t.Fatalf("no speaker DaemonSet: %v", err)
	}
}
