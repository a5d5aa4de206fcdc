package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FaultRates say how often each fault happens.
type FaultRates struct {
	// WriteFailure is the share of writes (POST, PUT, PATCH, DELETE) answered
	// with an error instead of being sent: 500, 503, 429 or 409, chosen evenly.
	WriteFailure float64
	// Delay is the share of requests, of any verb, held before being sent
	// (or, for a failed write, before being answered).
	Delay float64
	// A held request waits a uniformly random time in [MinDelay, MaxDelay].
	MinDelay, MaxDelay time.Duration
	// WatchLifetime bounds how long a watch stays open: it is cut after a
	// random time in [WatchLifetime/2, WatchLifetime]. 0: watches are not cut.
	// Under 2 s, a watch may end within a second without an event, which
	// client-go's reflector takes for a failure: it lists again, after a
	// backoff that doubles each time, and its cache lags for seconds.
	WatchLifetime time.Duration
	// FailFirstWrites fails the first n writes whatever the draw, so that a
	// story that writes meets failures whatever the seed and the order its
	// requests come in: with few writes, a seed's draws may fail none.
	FailFirstWrites int
	// AnswerLost is the share of writes sent to the server whose answer is
	// lost: the server made the write, and the client sees its connection
	// reset (a create that exists though the client saw an error, an update
	// whose new resourceVersion it never learnt).
	AnswerLost float64
	// LoseFirstAnswers loses the answers of the first n writes sent,
	// whatever the draw.
	LoseFirstAnswers int
	// FailFirstTries fails the first n tries of every request but watches
	// (by method and path), whatever the draw, so that every step of a
	// program (its start, above all) meets failures, however few its
	// requests and however it retries them.
	FailFirstTries int
}

// lostConnection, in place of a status code, fails a request with the error
// of a connection the server reset, without sending it.
const lostConnection = -1

// firstFailures are, in turn, the failures of FailFirstWrites and
// FailFirstTries, of the requests that may conflict (updates, patches,
// deletes) and of the others: first those client-go hands to its caller
// (500; 409; a lost connection), then those it retries itself after their
// Retry-After (503, 429). A create is never failed with a conflict:
// kube-apiserver answers a create 409 only when the object exists, and then
// with AlreadyExists, which would tell the client a lie.
var firstFailures = map[bool][]int{
	true:  {http.StatusInternalServerError, http.StatusConflict, lostConnection, http.StatusServiceUnavailable, http.StatusTooManyRequests},
	false: {http.StatusInternalServerError, lostConnection, http.StatusServiceUnavailable, http.StatusTooManyRequests},
}

// DefaultFaultRates make 25 % of writes fail, 10 % of requests wait 1-3 s,
// and cut every watch within 20 s.
var DefaultFaultRates = FaultRates{
	WriteFailure:  0.25,
	Delay:         0.10,
	MinDelay:      time.Second,
	MaxDelay:      3 * time.Second,
	WatchLifetime: 20 * time.Second,
}

// failureCodes are the answers a failed write gets, each as likely.
var failureCodes = []int{
	http.StatusInternalServerError,
	http.StatusServiceUnavailable,
	http.StatusTooManyRequests,
	http.StatusConflict,
}

// failureReasons are the reasons kube-apiserver gives with failureCodes; the
// client's error helpers (apierrors.IsConflict, ...) look at the reason.
var failureReasons = map[int]metav1.StatusReason{
	http.StatusInternalServerError: metav1.StatusReasonInternalError,
	http.StatusServiceUnavailable:  metav1.StatusReasonServiceUnavailable,
	http.StatusTooManyRequests:     metav1.StatusReasonTooManyRequests,
	http.StatusConflict:            metav1.StatusReasonConflict,
}

// Faults injects faults into the requests of Kubernetes clients: failed
// writes, delays and cut watches, drawn from a seeded source so that a
// failure can be reproduced. It is safe for concurrent use.
type Faults struct {
	rates FaultRates

	mu      sync.Mutex // guards what follows
	rng     *rand.Rand
	stopped bool
	seen    FaultCounts
	sent    int            // writes sent, their answers lost or not
	tries   map[string]int // of each request, by method and path
	// firstFailed counts the failures of FailFirstWrites and FailFirstTries,
	// of the requests that may conflict and of the others.
	firstFailed map[bool]int
}

// NewFaults returns faults at the rates given, drawn from seed.
func NewFaults(seed uint64, rates FaultRates) *Faults {
	return &Faults{
		rates: rates,
		rng:   rand.New(rand.NewPCG(seed, seed)),
		seen:  FaultCounts{Failed: map[int]int{}},
		tries: map[string]int{}, firstFailed: map[bool]int{},
	}
}

// Wrap returns rt with faults injected: pass it to rest.Config.Wrap.
func (f *Faults) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &faultTransport{faults: f, next: rt}
}

// Stop ends the faults: from now on every request passes untouched and
// uncounted, and no open watch is cut any more. A test calls it to check
// that the code under test recovers once the faults are gone.
func (f *Faults) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
}

// Seen returns what was injected so far.
func (f *Faults) Seen() FaultCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.seen
	c.Failed = maps.Clone(f.seen.Failed)
	c.FailedFirst = slices.Clone(f.seen.FailedFirst)
	return c
}

// FaultCounts count the requests seen and the faults injected.
type FaultCounts struct {
	// Requests counts every request seen, Writes the writes among them.
	Requests, Writes int
	// Failed counts the failed requests by HTTP status code, Lost those
	// failed with a lost connection, AnswersLost the writes made whose
	// answers were lost.
	Failed      map[int]int
	Lost        int
	AnswersLost int
	// Delayed counts the requests held, WatchesCut the watches cut.
	Delayed, WatchesCut int
	// FailedFirst are the requests FailFirstWrites and FailFirstTries
	// failed, in order: their method, path and the failure ("POST
	// /api/v1/namespaces 500").
	FailedFirst []string
}

// String tells the counts in one line, for a test's log.
func (c FaultCounts) String() string {
	failed := 0
	var codes []string
	for _, code := range failureCodes {
		if n := c.Failed[code]; n > 0 {
			failed += n
			codes = append(codes, fmt.Sprintf("%d: %d", code, n))
		}
	}
	s := fmt.Sprintf("%d requests, %d writes: %d failed", c.Requests, c.Writes, failed)
	if len(codes) > 0 {
		s += " (" + strings.Join(codes, ", ") + ")"
	}
	if c.Lost > 0 {
		s += fmt.Sprintf(", %d connections lost", c.Lost)
	}
	if c.AnswersLost > 0 {
		s += fmt.Sprintf(", %d answers lost", c.AnswersLost)
	}
	return s + fmt.Sprintf(", %d delayed, %d watches cut", c.Delayed, c.WatchesCut)
}

// FaultSeed returns the seed of a test's faults: $FAULT_SEED if set (a
// number, or "random" for one from the clock), else 1. It logs the seed, so
// that a failure seen once can be run again with the same faults.
func FaultSeed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(1)
	switch s := os.Getenv("FAULT_SEED"); s {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FAULT_SEED=%q: want a number or \"random\"", s)
		}
		seed = n
	}
	t.Logf("fault seed %d (run again with FAULT_SEED=%d)", seed, seed)
	return seed
}

// decision is what happens to one request.
type decision struct {
	fail       int           // the status code it is answered with; 0: it is sent
	loseAnswer bool          // sent, and its answer lost
	delay      time.Duration // how long it is held first
	lifetime   time.Duration // for a watch, when it is cut; 0: never
}

// draw decides the fate of one request. It is pure, given the source, so
// that the shares and the seed's sequence can be tested without a server.
func draw(rng *rand.Rand, rates FaultRates, write, watch bool) decision {
	var d decision
	if write && rng.Float64() < rates.WriteFailure {
		d.fail = failureCodes[rng.IntN(len(failureCodes))]
	}
	// Drawn only when asked for: the seeds of the stories without it keep
	// their sequences.
	if write && d.fail == 0 && rates.AnswerLost > 0 {
		d.loseAnswer = rng.Float64() < rates.AnswerLost
	}
	if rng.Float64() < rates.Delay {
		d.delay = uniform(rng, rates.MinDelay, rates.MaxDelay)
	}
	if watch && rates.WatchLifetime > 0 {
		d.lifetime = uniform(rng, rates.WatchLifetime/2, rates.WatchLifetime)
	}
	return d
}

// uniform draws a duration in [lo, hi]; lo when hi is not above it.
func uniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// isWrite tells whether a request changes something on the server.
func isWrite(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// isWatch tells whether a request opens a watch: a GET with watch=true or
// watch=1 in its query.
func isWatch(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	w := req.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

// decide draws the fate of a request and counts it; after Stop, every
// request passes untouched and uncounted.
func (f *Faults) decide(req *http.Request) decision {
	write := isWrite(req)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return decision{}
	}
	watch := isWatch(req)
	d := draw(f.rng, f.rates, write, watch)
	if code, first := f.firstFailure(req, write, watch); first {
		d.fail = code
		f.seen.FailedFirst = append(f.seen.FailedFirst, fmt.Sprintf("%s %s %s", req.Method, req.URL.Path, failureName(code)))
	}
	f.seen.Requests++
	if write {
		f.seen.Writes++
	}
	if write && d.fail == 0 {
		f.sent++
		if f.sent <= f.rates.LoseFirstAnswers {
			d.loseAnswer = true
			f.seen.FailedFirst = append(f.seen.FailedFirst, fmt.Sprintf("%s %s answer lost", req.Method, req.URL.Path))
		}
	}
	if d.loseAnswer {
		f.seen.AnswersLost++
	}
	switch {
	case d.fail == lostConnection:
		f.seen.Lost++
	case d.fail != 0:
		f.seen.Failed[d.fail]++
	}
	if d.delay > 0 {
		f.seen.Delayed++
	}
	return d
}

// firstFailure tells whether a request is among those FailFirstWrites or
// FailFirstTries fail, and how; f.mu is held.
func (f *Faults) firstFailure(req *http.Request, write, watch bool) (int, bool) {
	if watch {
		return 0, false
	}
	first := write && f.seen.Writes < f.rates.FailFirstWrites
	if f.rates.FailFirstTries > 0 {
		key := req.Method + " " + req.URL.Path
		first = first || f.tries[key] < f.rates.FailFirstTries
		f.tries[key]++
	}
	if !first {
		return 0, false
	}
	conflicts := write && req.Method != http.MethodPost
	codes := firstFailures[conflicts]
	f.firstFailed[conflicts]++
	return codes[(f.firstFailed[conflicts]-1)%len(codes)], true
}

// failureName names a failure in FaultCounts.FailedFirst.
func failureName(code int) string {
	if code == lostConnection {
		return "lost connection"
	}
	return strconv.Itoa(code)
}

// faultTransport injects the faults of one Faults into the requests it sends.
type faultTransport struct {
	faults *Faults
	next   http.RoundTripper
}

// RoundTrip holds, fails or sends a request as decided, and arms the cut of
// a watch once it is open.
func (t *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d := t.faults.decide(req)
	if d.delay > 0 {
		if err := hold(req.Context(), d.delay); err != nil {
			closeBody(req) // a RoundTripper closes the body, sent or not
			return nil, err
		}
	}
	if d.fail == lostConnection {
		closeBody(req)
		return nil, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
	}
	if d.fail != 0 {
		closeBody(req)
		return failure(req, d.fail), nil
	}
	if d.loseAnswer {
		return loseAnswer(t.next, req)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || d.lifetime == 0 || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	resp.Body = t.faults.cutAfter(resp.Body, d.lifetime)
	return resp, nil
}

// loseAnswer sends a request and drops the server's answer, as a connection
// reset after the server answered would: client-go does not retry a write
// that fails so (it may have been made), and hands the error to its caller.
func loseAnswer(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the answer arrives, whole
	_ = resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// hold waits for d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// failure is the answer kube-apiserver would give with code. 429 and 503 ask
// to retry after a second, as kube-apiserver does when overloaded: client-go
// then retries them itself, while 500 and 409 reach the caller as errors.
func failure(req *http.Request, code int) *http.Response {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
		Reason:   failureReasons[code],
		Message:  fmt.Sprintf("%s %s: %d injected by testenv.Faults, the request was not sent", req.Method, req.URL.Path, code),
	}
	body, _ := json.Marshal(status) // plain fields: it cannot fail
	header := http.Header{"Content-Type": {"application/json"}}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		header.Set("Retry-After", "1")
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// cutBody is the body of an open watch, closed when its lifetime is up.
type cutBody struct {
	io.ReadCloser
	timer *time.Timer
	ended atomic.Bool // closed by its client, or cut
	cut   atomic.Bool
}

// cutAfter returns body, to be cut after lifetime.
func (f *Faults) cutAfter(body io.ReadCloser, lifetime time.Duration) io.ReadCloser {
	b := &cutBody{ReadCloser: body}
	b.timer = time.AfterFunc(lifetime, func() { f.cut(b) })
	return b
}

// cut closes a watch's body unless Stop was called or its client closed it.
// It does so under the lock, so that no cut follows the return of Stop.
func (f *Faults) cut(b *cutBody) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped || !b.ended.CompareAndSwap(false, true) {
		return
	}
	b.cut.Store(true)
	f.seen.WatchesCut++
	_ = b.ReadCloser.Close()
}

// Read reports a cut as io.ErrUnexpectedEOF, the error of a connection lost
// mid-stream: client-go then ends the watch quietly and its reflector
// watches again from where it was. The error of a read on a closed body
// would reach the reflector as an undecodable event instead, upon which it
// lists everything again after a backoff that grows with every cut.
func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.cut.Load() {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Close ends the watch for its client; it is not cut afterwards.
func (b *cutBody) Close() error {
	b.ended.Store(true)
	b.timer.Stop()
	return b.ReadCloser.Close()
}
