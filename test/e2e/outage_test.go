package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// The operator, with its default Lease timings, rides out a minute in which
// kube-apiserver answers nothing (stopped with SIGSTOP: connections stay
// open, requests hang): it never exits, and once the API server is back it
// acts at once, restoring a deleted speaker DaemonSet within 5 s.
func TestOperatorRidesOutAnAPIServerOutage(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)
	op := startOperator(t, env, release("4.22.0", "v0.16.1"), "--platform=BareMetal")
	op.waitReady(t)
	applyOnceServed(t, env, guideExample(t, "activate"))
	waitSpeaker(t, client, "")

	if err := env.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-op.done:
		_ = env.ResumeAPIServer()
		t.Fatalf("the operator exited during the outage; log:\n%s", op.log())
	case <-time.After(60 * time.Second): // the outage
	}
	if err := env.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	ds, err := client.AppsV1().DaemonSets("metallb-system").Get(t.Context(), "speaker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.AppsV1().DaemonSets("metallb-system").Delete(t.Context(), "speaker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitSpeaker(t, client, string(ds.UID))
	if took := time.Since(deleted); took > 5*time.Second {
		t.Errorf("the deleted speaker DaemonSet came back %s after the API server returned; want within 5s", took)
	}
	select {
	case <-op.done:
		t.Fatalf("the operator exited; log:\n%s", op.log())
	default:
	}
}

// Started while kube-apiserver answers nothing, the operator waits, saying so
// every few seconds, and once the API server is back it works.
func TestOperatorStartedDuringAnOutageWaits(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	client := kubernetes.NewForConfigOrDie(env.Config)
	createNamespaces(t, env, operatorNamespace)
	if err := env.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	op := startOperator(t, env, release("4.22.0", "v0.16.1"), "--platform=BareMetal")
	select {
	case <-op.done:
		_ = env.ResumeAPIServer()
		t.Fatalf("the operator exited while the API server was down; log:\n%s", op.log())
	case <-time.After(30 * time.Second): // the outage
	}
	if err := env.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	op.waitLog(t, "waiting for the Kubernetes API server")
	op.waitReady(t)
	applyOnceServed(t, env, guideExample(t, "activate"))
	waitSpeaker(t, client, "")
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
