package transient

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// Event writes the API server fails are tried again, eventWriteTries times in
// all, after a back-off that starts at eventRetryFirst and doubles: some
// 6 s in all.
const (
	eventWriteTries = 5
	eventRetryFirst = 400 * time.Millisecond
)

// RetryEventWrites tries again the writes of Events that the API server
// answers with a server error (or a 429) without a Retry-After, with
// back-off. client-go's event broadcaster drops an Event the API server
// refuses (it tries again only when it cannot reach the server, and its REST
// client only what comes with a Retry-After), so that the Events that ask a
// user to act (MemberlistKeyRegenerated, RenderingRefused) would be lost
// exactly when the API server struggles. Pass it to rest.Config.Wrap.
func RetryEventWrites(rt http.RoundTripper) http.RoundTripper {
	return eventRetry{next: rt, sleep: sleep}
}

type eventRetry struct {
	next  http.RoundTripper
	sleep func(context.Context, time.Duration) error
}

func (e eventRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isEventWrite(req) || (req.Body != nil && req.GetBody == nil) {
		return e.next.RoundTrip(req)
	}
	wait := eventRetryFirst
	for try := 1; ; try++ {
		attempt := req
		if try > 1 {
			attempt = req.Clone(req.Context())
			if req.Body != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				attempt.Body = body
			}
		}
		resp, err := e.next.RoundTrip(attempt)
		if err != nil || try == eventWriteTries || !failedForNow(resp) {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err := e.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		wait *= 2
	}
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// failedForNow tells an answer worth trying again that client-go's REST
// client would not: a server error or a 429 without a Retry-After.
func failedForNow(resp *http.Response) bool {
	transient := resp.StatusCode >= http.StatusInternalServerError || resp.StatusCode == http.StatusTooManyRequests
	return transient && resp.Header.Get("Retry-After") == ""
}

// isEventWrite tells the creation or change of an Event, of either API:
// .../events or .../events/NAME.
func isEventWrite(req *http.Request) bool {
	if req.Method != http.MethodPost && req.Method != http.MethodPut && req.Method != http.MethodPatch {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	n := len(parts)
	return parts[n-1] == "events" || (n > 1 && parts[n-2] == "events")
}
