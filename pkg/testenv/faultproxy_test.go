package testenv

import (
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The proxy of ServeWithFaults answers its client as the API server would,
// as the kubeconfig's user, with the faults injected: a 500, then a lost
// connection, then the API server's own answer; a watch streams its events.
func TestServeWithFaults(t *testing.T) {
	e := New(t, Options{})
	f := NewFaults(FaultSeed(t), FaultRates{FailFirstTries: 2})
	kubeconfig := ServeWithFaults(t, e.Kubeconfig, f)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	url := cfg.Host + "/api/v1/namespaces/default"
	resp, err := http.Get(url)
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("first GET: %v, %v; want a 500", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("second GET answered %s, want its connection lost", resp.Status)
	}
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("third GET (sent as the kubeconfig's user): %s %s", resp.Status, body)
	}

	client := kubernetes.NewForConfigOrDie(cfg)
	w, err := client.CoreV1().Namespaces().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=proxied"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	admin := kubernetes.NewForConfigOrDie(e.Config)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "proxied"}}
	if _, err := admin.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added {
			t.Errorf("the watch through the proxy saw %s, want the namespace added", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch through the proxy saw no event in 10 s")
	}
	if seen := f.Seen(); len(seen.FailedFirst) != 2 || seen.Lost != 1 {
		t.Errorf("Seen() = %s, the first failed %q", seen, seen.FailedFirst)
	}
}
