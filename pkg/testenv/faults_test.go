package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The same seed gives the same faults for the same requests, another seed others.
func TestFaultsFollowTheSeed(t *testing.T) {
	seed := FaultSeed(t)
	run := func(seed uint64) []decision {
		f := NewFaults(seed, DefaultFaultRates)
		var ds []decision
		for i := range 300 {
			method, query := []string{"GET", "POST", "PUT", "PATCH", "DELETE"}[i%5], ""
			if i%3 == 0 {
				query = "?watch=true"
			}
			req, err := http.NewRequest(method, "https://apiserver/api/v1/configmaps"+query, nil)
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, f.decide(req))
		}
		return ds
	}
	if !slices.Equal(run(seed), run(seed)) {
		t.Error("the same seed gave two sequences of faults")
	}
	if slices.Equal(run(seed), run(seed+1)) {
		t.Errorf("seeds %d and %d gave the same faults", seed, seed+1)
	}
}

// fastRates suit a test against kube-apiserver: many faults, short delays,
// and watches cut after a second or two. Not sooner: client-go's reflector
// takes a watch that ends within a second, without events, for a failure,
// and waits longer before each new one.
var fastRates = FaultRates{
	WriteFailure:  0.5,
	Delay:         0.2,
	MinDelay:      10 * time.Millisecond,
	MaxDelay:      50 * time.Millisecond,
	WatchLifetime: 2 * time.Second,
}

// Over many requests, each fault happens as often as its rate says, and the
// times drawn stay within their bounds.
func TestFaultShares(t *testing.T) {
	always := FaultRates{WriteFailure: 1, Delay: 1, MinDelay: 5 * time.Millisecond, MaxDelay: 5 * time.Millisecond, WatchLifetime: time.Second}
	seed := FaultSeed(t)
	for _, tc := range []struct {
		name                                   string
		rates                                  FaultRates
		write, watch                           bool
		wantFail, wantDelay, wantCut, wantLost float64
	}{
		{"writes at the default rates", DefaultFaultRates, true, false, 0.25, 0.10, 0, 0},
		{"watches at the default rates", DefaultFaultRates, false, true, 0, 0.10, 1, 0},
		{"writes at fast rates", fastRates, true, false, 0.5, 0.2, 0, 0},
		{"reads never fail", always, false, false, 0, 1, 0, 0},
		{"every write fails", always, true, false, 1, 1, 0, 0},
		{"no faults", FaultRates{}, true, false, 0, 0, 0, 0},
		{"watches not cut without a lifetime", FaultRates{Delay: 0.5, MaxDelay: time.Second}, false, true, 0, 0.5, 0, 0},
		{"answers lost: of the writes not failed", FaultRates{WriteFailure: 0.5, AnswerLost: 0.5}, true, false, 0.5, 0, 0, 0.25},
		{"answers of reads never lost", FaultRates{AnswerLost: 1}, false, false, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 10000
			rng := rand.New(rand.NewPCG(seed, seed))
			failed := map[int]int{}
			var delayed, cut, lost int
			for range n {
				d := draw(rng, tc.rates, tc.write, tc.watch)
				if d.fail != 0 {
					failed[d.fail]++
				}
				if d.loseAnswer {
					lost++
				}
				if d.delay > 0 {
					delayed++
					within(t, "delay", d.delay, tc.rates.MinDelay, tc.rates.MaxDelay)
				}
				if d.lifetime > 0 {
					cut++
					within(t, "watch lifetime", d.lifetime, tc.rates.WatchLifetime/2, tc.rates.WatchLifetime)
				}
			}
			share(t, "failed writes", sum(failed), n, tc.wantFail)
			for _, code := range failureCodes {
				share(t, fmt.Sprintf("failed with %d", code), failed[code], n, tc.wantFail/float64(len(failureCodes)))
			}
			share(t, "delayed", delayed, n, tc.wantDelay)
			share(t, "watches cut", cut, n, tc.wantCut)
			share(t, "answers lost", lost, n, tc.wantLost)
		})
	}
}

// share fails the test when count out of n is not want, give or take 2 %:
// over 10,000 draws, about 5 standard deviations.
func share(t *testing.T, what string, count, n int, want float64) {
	t.Helper()
	if got := float64(count) / float64(n); math.Abs(got-want) > 0.02 {
		t.Errorf("%s: share %.3f, want %.3f", what, got, want)
	}
}

func within(t *testing.T, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Fatalf("%s %s is not in [%s, %s]", what, d, lo, hi)
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Writes are told by their verb, watches by their query.
func TestFaultRequestKinds(t *testing.T) {
	for _, tc := range []struct {
		method, url  string
		write, watch bool
	}{
		{"GET", "/api/v1/namespaces/a/configmaps?resourceVersion=5&watch=true", false, true},
		{"GET", "/api/v1/configmaps?allowWatchBookmarks=true&watch=1", false, true},
		{"GET", "/api/v1/configmaps?watch=false", false, false},
		{"GET", "/api/v1/configmaps?watch=0", false, false},
		{"GET", "/api/v1/configmaps", false, false},
		{"GET", "/api/v1/configmaps?labelSelector=watch%3Dtrue", false, false},
		{"GET", "/api/v1/namespaces/a/configmaps/watch", false, false},
		{"POST", "/api/v1/namespaces/a/configmaps?watch=true", true, false},
		{"PUT", "/api/v1/namespaces/a/configmaps/b", true, false},
		{"PATCH", "/api/v1/namespaces/a/configmaps/b", true, false},
		{"DELETE", "/api/v1/namespaces/a/configmaps/b", true, false},
		{"HEAD", "/api/v1/namespaces/a/configmaps/b", false, false},
	} {
		req, err := http.NewRequest(tc.method, "https://apiserver"+tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := isWrite(req); got != tc.write {
			t.Errorf("%s %s: write %t, want %t", tc.method, tc.url, got, tc.write)
		}
		if got := isWatch(req); got != tc.watch {
			t.Errorf("%s %s: watch %t, want %t", tc.method, tc.url, got, tc.watch)
		}
	}
}

func TestFaultCountsString(t *testing.T) {
	for _, tc := range []struct {
		counts FaultCounts
		want   string
	}{
		{FaultCounts{}, "0 requests, 0 writes: 0 failed, 0 delayed, 0 watches cut"},
		{
			FaultCounts{Requests: 412, Writes: 180, Failed: map[int]int{500: 12, 503: 10, 429: 11, 409: 12}, Delayed: 40, WatchesCut: 7},
			"412 requests, 180 writes: 45 failed (500: 12, 503: 10, 429: 11, 409: 12), 40 delayed, 7 watches cut",
		},
		{FaultCounts{Requests: 3, Writes: 2, Failed: map[int]int{409: 1}}, "3 requests, 2 writes: 1 failed (409: 1), 0 delayed, 0 watches cut"},
		{FaultCounts{Requests: 9, Writes: 4, AnswersLost: 4}, "9 requests, 4 writes: 0 failed, 4 answers lost, 0 delayed, 0 watches cut"},
	} {
		if got := tc.counts.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestFaultSeed(t *testing.T) {
	for env, want := range map[string]uint64{"": 1, "42": 42, "18446744073709551615": math.MaxUint64} {
		t.Setenv("FAULT_SEED", env)
		if got := FaultSeed(t); got != want {
			t.Errorf("FAULT_SEED=%q: seed %d, want %d", env, got, want)
		}
	}
	t.Setenv("FAULT_SEED", "random")
	if a, b := FaultSeed(t), FaultSeed(t); a == b {
		t.Errorf("FAULT_SEED=random gave %d twice", a)
	}
}

// roundTripFunc stands for the transport to kube-apiserver.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// closeRecorder is a request body that tells whether it was closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// A failed write is answered as kube-apiserver would, without being sent.
func TestFaultsAnswerFailedWritesWithoutSendingThem(t *testing.T) {
	f := NewFaults(FaultSeed(t), FaultRates{WriteFailure: 1})
	sent := 0
	rt := f.Wrap(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}))
	answered := map[int]int{}
	for range 100 {
		body := &closeRecorder{Reader: strings.NewReader("{}")}
		req, err := http.NewRequest("POST", "https://apiserver/api/v1/namespaces/a/configmaps", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		checkInjectedFailure(t, req, resp)
		answered[resp.StatusCode]++
		if !body.closed {
			t.Errorf("the body of a request answered with %d was not closed", resp.StatusCode)
		}
	}
	if sent != 0 {
		t.Errorf("%d failed writes were sent", sent)
	}
	if len(answered) != len(failureCodes) {
		t.Errorf("100 failed writes were answered with %v, want each of %v", answered, failureCodes)
	}
	if seen := f.Seen(); !maps.Equal(seen.Failed, answered) || seen.Writes != 100 || seen.Requests != 100 {
		t.Errorf("Seen() = %s, answered %v", seen, answered)
	}
	req, _ := http.NewRequest("GET", "https://apiserver/api/v1/namespaces/a/configmaps", nil)
	if resp, err := rt.RoundTrip(req); err != nil || resp.StatusCode != http.StatusOK || sent != 1 {
		t.Errorf("a read at WriteFailure 1 was not sent (%d requests sent, error %v)", sent, err)
	}
}

// FailFirstWrites fails the first writes, and FailFirstTries the first
// tries of every request but watches, each with the next failure in turn,
// where no request would be failed otherwise; the requests after them are
// drawn as ever.
func TestFaultsFailTheFirstRequests(t *testing.T) {
	f := NewFaults(FaultSeed(t), FaultRates{FailFirstWrites: 3, FailFirstTries: 2})
	sent := 0
	rt := f.Wrap(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}))
	const lost = -1 // an error, the request unsent
	var got []int
	for _, path := range []string{"/api/v1/namespaces/a/configmaps", "/api/v1/namespaces/b/configmaps"} {
		for range 3 {
			for _, method := range []string{"GET", "PATCH", "WATCH"} {
				url := "https://apiserver" + path
				if method == "WATCH" {
					method, url = "GET", url+"?watch=true"
				}
				got = append(got, answer(t, rt, method, url))
			}
		}
	}
	want := []int{500, 500, 200, lost, 409, 200, 200, lost, 200, 503, 503, 200, 429, 429, 200, 200, 200, 200}
	if !slices.Equal(got, want) {
		t.Errorf("GET, PATCH, watch, 3 times for each of 2 paths, answered\n%v, want\n%v", got, want)
	}
	if sent != 9 {
		t.Errorf("%d requests were sent, want the 9 not failed", sent)
	}
	seen := f.Seen()
	if len(seen.FailedFirst) != 9 || seen.FailedFirst[1] != "PATCH /api/v1/namespaces/a/configmaps 500" || seen.Lost != 2 {
		t.Errorf("Seen() = %s, the first failed %q", seen, seen.FailedFirst)
	}

	// Creates are never failed with a conflict, which kube-apiserver gives
	// only to an object that exists.
	f = NewFaults(FaultSeed(t), FaultRates{FailFirstWrites: 5})
	rt = f.Wrap(rt.(*faultTransport).next)
	got = nil
	for range 5 {
		got = append(got, answer(t, rt, "POST", "https://apiserver/api/v1/namespaces/a/configmaps"))
	}
	if want := []int{500, lost, 503, 429, 500}; !slices.Equal(got, want) {
		t.Errorf("5 creates answered %v, want %v", got, want)
	}
}

// answer makes a request through rt, and returns its status code, or -1 for
// a connection lost.
func answer(t *testing.T, rt http.RoundTripper, method, url string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	switch {
	case utilnet.IsConnectionReset(err):
		return -1
	case err != nil:
		t.Fatal(err)
	}
	return resp.StatusCode
}

// checkInjectedFailure checks that resp is a failure as kube-apiserver gives it.
func checkInjectedFailure(t *testing.T, req *http.Request, resp *http.Response) {
	t.Helper()
	reasons := map[int]metav1.StatusReason{500: "InternalError", 503: "ServiceUnavailable", 429: "TooManyRequests", 409: "Conflict"}
	code := resp.StatusCode
	var status metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		t.Fatalf("%d: body: %v", code, err)
	}
	if status.APIVersion != "v1" || status.Kind != "Status" || status.Status != metav1.StatusFailure ||
		int(status.Code) != code || status.Reason != reasons[code] || !strings.Contains(status.Message, "injected") {
		t.Errorf("%d answered with %+v", code, status)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("%d: Content-Type %q", code, got)
	}
	wantRetry := ""
	if code == 429 || code == 503 {
		wantRetry = "1"
	}
	if got := resp.Header.Get("Retry-After"); got != wantRetry {
		t.Errorf("%d: Retry-After %q, want %q", code, got, wantRetry)
	}
	if resp.Request != req {
		t.Errorf("%d: the response does not hold its request", code)
	}
}

// A delayed request is sent after its delay, or not at all when its context
// ends first.
func TestFaultDelays(t *testing.T) {
	seed := FaultSeed(t)
	sent := 0
	server := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	const delay = 30 * time.Millisecond
	f := NewFaults(seed, FaultRates{Delay: 1, MinDelay: delay, MaxDelay: delay})
	req, _ := http.NewRequest("GET", "https://apiserver/api/v1/configmaps", nil)
	start := time.Now()
	if _, err := f.Wrap(server).RoundTrip(req); err != nil || sent != 1 {
		t.Fatalf("a delayed request was not sent (error %v)", err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("a request delayed %s was sent after %s", delay, took)
	}

	f = NewFaults(seed, FaultRates{Delay: 1, MinDelay: time.Hour, MaxDelay: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), delay)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", "https://apiserver/api/v1/configmaps", nil)
	if _, err := f.Wrap(server).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) || sent != 1 {
		t.Errorf("a request whose context ended while held: error %v, %d sent, want context.DeadlineExceeded, 1", err, sent)
	}
	if seen := f.Seen(); seen.Delayed != 1 {
		t.Errorf("Seen() = %s, want 1 delayed", seen)
	}
}

// A watch is cut within its lifetime, as a lost connection; after Stop, a
// watch whose cut was armed before stays open.
func TestFaultsCutWatchesUntilStopped(t *testing.T) {
	const lifetime = 100 * time.Millisecond
	f := NewFaults(FaultSeed(t), FaultRates{WatchLifetime: lifetime})
	var writer *io.PipeWriter // the server's end of the last watch opened
	rt := f.Wrap(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		var body *io.PipeReader
		body, writer = io.Pipe()
		return &http.Response{StatusCode: http.StatusOK, Body: body, Request: req}, nil
	}))
	open := func() io.ReadCloser {
		req, _ := http.NewRequest("GET", "https://apiserver/api/v1/configmaps?watch=true", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Body
	}

	start := time.Now()
	body := open()
	select {
	case r := <-readAll(body):
		if took := time.Since(start); !errors.Is(r.err, io.ErrUnexpectedEOF) || took < lifetime/2 {
			t.Errorf("a watch of lifetime %s ended after %s with %v, want io.ErrUnexpectedEOF", lifetime, took, r.err)
		}
	case <-time.After(10 * lifetime):
		t.Fatalf("a watch of lifetime %s is still open after %s", lifetime, 10*lifetime)
	}
	_ = body.Close()

	body = open()
	f.Stop()
	result := readAll(body)
	select {
	case r := <-result:
		t.Fatalf("a watch was cut after Stop: %v", r.err)
	case <-time.After(3 * lifetime):
	}
	_, _ = writer.Write([]byte("event"))
	_ = writer.Close()
	if r := <-result; r.err != nil || r.data != "event" {
		t.Errorf("a watch open over Stop read %q, %v", r.data, r.err)
	}
	if seen := f.Seen(); seen.WatchesCut != 1 || seen.Requests != 2 {
		t.Errorf("Seen() = %s, want the 2 watches opened before Stop, 1 of them cut", seen)
	}
}

type readResult struct {
	data string
	err  error
}

func readAll(r io.Reader) <-chan readResult {
	c := make(chan readResult, 1)
	go func() {
		data, err := io.ReadAll(r)
		c <- readResult{string(data), err}
	}()
	return c
}

// Against kube-apiserver: 500 and 409 reach the caller, 429 and 503 are
// retried by client-go, and no failed write reaches the server; watches are
// cut and an informer gets over it; after Stop nothing is injected.
func TestFaultsAgainstAPIServer(t *testing.T) {
	e := New(t, Options{})
	admin := kubernetes.NewForConfigOrDie(e.Config)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "faults"}}
	if _, err := admin.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seed := FaultSeed(t)
	f := NewFaults(seed, fastRates)
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(f.Wrap)
	client := kubernetes.NewForConfigOrDie(cfg)
	store := startInformer(t, client, ns.Name)

	start := time.Now()
	created, errs := createUntilEveryFault(t, client, admin, f, ns.Name)
	t.Logf("%d ConfigMaps created in %s", len(created), time.Since(start).Round(time.Millisecond))
	checkCounts(t, f.Seen(), len(created), errs, time.Since(start))
	checkServerHolds(t, admin, ns.Name, created)
	waitForStore(t, store, ns.Name, created)
	if seen := f.Seen(); seen.WatchesCut == 0 {
		t.Errorf("Seen() = %s: the informer's watch was not cut while ConfigMaps were created", seen)
	}
	checkWatchIsCut(t, client, ns.Name, fastRates.WatchLifetime)
	t.Logf("faults injected: %s", f.Seen())

	f.Stop()
	stopped := f.Seen().String()
	created = append(created, checkStopEndsFaults(t, e.Config, ns.Name, seed)...)
	waitForStore(t, store, ns.Name, created)
	if seen := f.Seen().String(); seen != stopped {
		t.Errorf("after Stop, %s became %s", stopped, seen)
	}
}

// Against kube-apiserver, a write whose answer is lost is made: a create, an
// update, a patch and a delete each reach the caller as a connection reset
// (client-go does not retry a write that may have been made), and the server
// holds what each did; the writes after LoseFirstAnswers are answered.
func TestFaultsLoseAnswersAgainstAPIServer(t *testing.T) {
	e := New(t, Options{})
	admin := kubernetes.NewForConfigOrDie(e.Config).CoreV1().ConfigMaps(metav1.NamespaceDefault)
	f := NewFaults(FaultSeed(t), FaultRates{LoseFirstAnswers: 4})
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(f.Wrap)
	client := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(metav1.NamespaceDefault)
	ctx := t.Context()
	holds := func(what string, err error, want string) {
		t.Helper()
		if !utilnet.IsConnectionReset(err) {
			t.Fatalf("%s: error %v, want a connection reset", what, err)
		}
		got, err := admin.Get(ctx, "lost", metav1.GetOptions{})
		if data := got.Data["k"]; (want == "") != apierrors.IsNotFound(err) || want != "" && data != want {
			t.Fatalf("after the %s whose answer was lost, the server holds k=%q (%v), want %q", what, data, err, want)
		}
	}
	_, err := client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	holds("create", err, "1")
	cm, _ := admin.Get(ctx, "lost", metav1.GetOptions{})
	cm.Data["k"] = "2"
	_, err = client.Update(ctx, cm, metav1.UpdateOptions{})
	holds("update", err, "2")
	_, err = client.Patch(ctx, "lost", types.MergePatchType, []byte(`{"data":{"k":"3"}}`), metav1.PatchOptions{})
	holds("patch", err, "3")
	holds("delete", client.Delete(ctx, "lost", metav1.DeleteOptions{}), "")
	if _, err := client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "answered"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("the fifth write: %v, want it answered", err)
	}
	if seen := f.Seen(); seen.AnswersLost != 4 || seen.Writes != 5 || len(seen.FailedFirst) != 4 ||
		seen.FailedFirst[0] != "POST /api/v1/namespaces/default/configmaps answer lost" {
		t.Errorf("Seen() = %s, the first %q", seen, seen.FailedFirst)
	}
}

// startInformer runs an informer of the ConfigMaps in ns until the test ends.
func startInformer(t *testing.T, client kubernetes.Interface, ns string) cache.Store {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	informer := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown) // after the test's context ended, before the control plane stops
	if !cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	return informer.GetStore()
}

// createUntilEveryFault creates ConfigMaps one by one, at least minCreates,
// until each failure was injected. It returns the names created and the
// errors met, by code, having checked that the server lacks the others.
func createUntilEveryFault(t *testing.T, client, admin kubernetes.Interface, f *Faults, ns string) ([]string, map[int]int) {
	const minCreates, maxCreates = 20, 300
	var created []string
	errs := map[int]int{}
	for i := range maxCreates {
		if seen := f.Seen(); i >= minCreates && len(seen.Failed) == len(failureCodes) {
			return created, errs
		}
		name := fmt.Sprintf("cm-%03d", i)
		_, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			created = append(created, name)
			continue
		case !strings.Contains(err.Error(), "injected"):
			t.Fatalf("creating %s: %v, want success or an injected failure", name, err)
		case apierrors.IsInternalError(err):
			errs[http.StatusInternalServerError]++
		case apierrors.IsConflict(err):
			errs[http.StatusConflict]++
		default:
			t.Fatalf("creating %s: %v reached the caller: client-go should retry 429 and 503", name, err)
		}
		if _, err := admin.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("creating %s failed, but the server has it (get: %v)", name, err)
		}
	}
	t.Fatalf("%d creates did not meet every failure: %s", maxCreates, f.Seen())
	return nil, nil
}

// checkCounts checks that Seen() tells what the test saw: each failure
// injected, 500 and 409 as often as the errors met, 429 and 503 retried (as
// many more writes, each after the second asked for), and some delays.
func checkCounts(t *testing.T, seen FaultCounts, created int, errs map[int]int, took time.Duration) {
	t.Helper()
	for _, code := range failureCodes {
		if seen.Failed[code] == 0 {
			t.Errorf("Seen() = %s: no write failed with %d", seen, code)
		}
	}
	for _, code := range []int{http.StatusInternalServerError, http.StatusConflict} {
		if seen.Failed[code] != errs[code] {
			t.Errorf("Seen() = %s, but creates met %d errors %d times", seen, code, errs[code])
		}
	}
	if sent := seen.Writes - sum(seen.Failed); sent != created {
		t.Errorf("Seen() = %s: %d writes sent, but %d creates succeeded", seen, sent, created)
	}
	retried := seen.Failed[http.StatusTooManyRequests] + seen.Failed[http.StatusServiceUnavailable]
	if took < time.Duration(retried)*time.Second {
		t.Errorf("%d retries after a Retry-After of a second took %s", retried, took)
	}
	if seen.Delayed == 0 || seen.Requests <= seen.Writes {
		t.Errorf("Seen() = %s: want delays, and the informer's reads", seen)
	}
}

// checkServerHolds checks that the server has the ConfigMaps created, and no other.
func checkServerHolds(t *testing.T, admin kubernetes.Interface, ns string, created []string) {
	t.Helper()
	list, err := admin.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, created) {
		t.Errorf("the server holds %v, want the ConfigMaps created: %v", names, created)
	}
}

// waitForStore waits until the informer's store holds the ConfigMaps named, and no other.
func waitForStore(t *testing.T, store cache.Store, ns string, names []string) {
	t.Helper()
	var want []string
	for _, name := range names {
		want = append(want, ns+"/"+name)
	}
	slices.Sort(want)
	var keys []string
	start := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		keys = store.ListKeys()
		slices.Sort(keys)
		return slices.Equal(keys, want), nil
	})
	if err != nil {
		t.Fatalf("the informer holds %d ConfigMaps, want %d: %v", len(keys), len(want), err)
	}
	t.Logf("the informer holds the %d ConfigMaps created after %s", len(want), time.Since(start).Round(time.Millisecond))
}

// checkWatchIsCut checks that a watch ends within its lifetime, without an
// error event: as a lost connection, not as a broken stream.
func checkWatchIsCut(t *testing.T, client kubernetes.Interface, ns string, lifetime time.Duration) {
	t.Helper()
	const slack = 500 * time.Millisecond // for the machine's load
	start := time.Now()
	w, err := client.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.NewTimer(lifetime + slack)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				if took := time.Since(start); took < lifetime/2 {
					t.Errorf("a watch of lifetime %s ended after %s", lifetime, took)
				}
				return
			}
			if ev.Type == watch.Error {
				t.Errorf("the watch ended with an error event: %v", ev.Object)
			}
		case <-timeout.C:
			t.Fatalf("a watch of lifetime %s is still open after %s", lifetime, time.Since(start))
		}
	}
}

// checkStopEndsFaults checks, through faults that fail every write and cut
// every watch within a second, that after Stop writes succeed and a watch
// whose cut was armed before stays open for three lifetimes. It returns the
// names of the ConfigMaps created.
func checkStopEndsFaults(t *testing.T, config *rest.Config, ns string, seed uint64) []string {
	t.Helper()
	const lifetime, creates = time.Second, 20
	g := NewFaults(seed, FaultRates{WriteFailure: 1, WatchLifetime: lifetime})
	cfg := rest.CopyConfig(config)
	cfg.Wrap(g.Wrap)
	client := kubernetes.NewForConfigOrDie(cfg)
	w, err := client.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{LabelSelector: "phase=after-stop"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	g.Stop()
	open := time.NewTimer(3 * lifetime)
	names := createAll(t, client, ns, creates)
	added := 0
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("a watch opened before Stop ended after it, having seen %d of %d ConfigMaps", added, creates)
			}
			added++
			if ev.Type != watch.Added {
				t.Errorf("watch event %s, want %s", ev.Type, watch.Added)
			}
		case <-open.C:
			if added != creates {
				t.Errorf("a watch open over Stop saw %d ConfigMaps created, want %d", added, creates)
			}
			if seen := g.Seen(); seen.WatchesCut != 0 || seen.Requests != 1 {
				t.Errorf("Seen() = %s, want only the watch opened before Stop", seen)
			}
			return names
		}
	}
}

// createAll creates n ConfigMaps labelled phase=after-stop, each of which must succeed.
func createAll(t *testing.T, client kubernetes.Interface, ns string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("after-stop-%02d", i),
			Labels: map[string]string{"phase": "after-stop"},
		}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s after Stop: %v", cm.Name, err)
		}
		names = append(names, cm.Name)
	}
	return names
}
