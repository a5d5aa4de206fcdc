package transient

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// RedialEvery is how often a connection the API server refused is dialled
// again.
const RedialEvery = 250 * time.Millisecond

// DialFunc dials as rest.Config.Dial does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// PatientDial wraps dial (nil: a dialer as client-go's default) so that,
// while the API server refuses connections (kube-apiserver restarting), a
// request waits in its dial, dialling again every RedialEvery, until the
// server accepts or the request's context ends. Failing at once instead,
// every list and watch of client-go's reflectors fails again and again, and
// each failure doubles their back-off, up to 30 s with as much jitter: after
// a minute's restart the operator's caches stayed blind for 44 s more
// (TestOperatorRidesOutAnAPIServerRestart). Waiting, a watch starts again as
// soon as the server is back, as after an outage in which the server took
// connections and answered nothing. Requests with a deadline keep it.
func PatientDial(dial DialFunc) DialFunc {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		for {
			conn, err := dial(ctx, network, address)
			if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
				return conn, err
			}
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(RedialEvery):
			}
		}
	}
}
