package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
)

// errKilled is what the proxy answers the write after which it killed the
// operator: the answer, like the process, is gone.
var errKilled = errors.New("the operator was killed after this write reached the API server")

// apiRequests parses a request's path as kube-apiserver does.
var apiRequests = &genericrequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// crashWrites sits between the operator's process and the API server: it
// logs every write the operator makes, and kills the process right after its
// k-th counted write reached the API server, before the answer comes back.
// Writes to Leases and Events are logged, not counted: their number depends
// on the clock, not on the story. No request passes before a process runs,
// so that a write cannot come before the process it would kill is known.
type crashWrites struct {
	mu      sync.Mutex
	k       int // 0: never kill
	op      *runningOperator
	running chan struct{}
	counted int
	writes  []string // "verb path code", in order
	killed  time.Time
}

func newCrashWrites(k int) *crashWrites { return &crashWrites{k: k, running: make(chan struct{})} }

// runs tells the proxy the process it serves now.
func (c *crashWrites) runs(op *runningOperator) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.op == nil {
		close(c.running)
	}
	c.op = op
}

func (c *crashWrites) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		select {
		case <-c.running:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		info, err := apiRequests.NewRequestInfo(req)
		if err != nil || !testenv.IsWriteVerb(info.Verb) {
			return next.RoundTrip(req)
		}
		resp, err := next.RoundTrip(req)
		code := 0
		if err == nil {
			code = resp.StatusCode
		}
		if c.made(info, req, code) {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, errKilled
		}
		return resp, err
	})
}

// made logs a write, and tells whether it was the k-th counted one, after
// which the process was killed.
func (c *crashWrites) made(info *genericrequest.RequestInfo, req *http.Request, code int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, fmt.Sprintf("%s %s %d", info.Verb, req.URL.Path, code))
	if info.Resource == "leases" || info.Resource == "events" {
		return false
	}
	c.counted++
	if c.counted != c.k {
		return false
	}
	c.op.kill()
	c.killed = time.Now()
	return true
}

// disarm has no later write kill the process, and tells whether one did.
func (c *crashWrites) disarm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.k = 0
	return !c.killed.IsZero()
}

// killedAt is when the process was killed; zero while it was not.
func (c *crashWrites) killedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// countedWrites is how many writes counted so far.
func (c *crashWrites) countedWrites() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counted
}

// all are the writes logged, in order.
func (c *crashWrites) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.writes)
}

// forbiddenDeletes are the deletions, among the writes, of what the
// operator never deletes: CRDs, the user's MetalLB and frr-k8s
// configuration, the memberlist Secret.
func (c *crashWrites) forbiddenDeletes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []string
	for _, w := range c.writes {
		verb, path, _ := strings.Cut(w, " ")
		if (verb == "delete" || verb == "deletecollection") &&
			(strings.Contains(path, "/customresourcedefinitions") || strings.Contains(path, "metallb.io/") ||
				strings.HasSuffix(strings.Fields(path)[0], "/secrets/memberlist")) {
			found = append(found, w)
		}
	}
	return found
}

// deletesOf are the deletions, among the writes, of the resources named.
func (c *crashWrites) deletesOf(resources ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []string
	for _, w := range c.writes {
		verb, path, _ := strings.Cut(w, " ")
		for _, r := range resources {
			if strings.HasPrefix(verb, "delete") && strings.Contains(path, "/"+r+"/") {
				found = append(found, w)
			}
		}
	}
	return found
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
