package transient

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// A refused connection is dialled again until the server accepts, or the
// request's context ends; any other failure is the request's at once.
func TestPatientDial(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	unreachable := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}
	for _, tc := range []struct {
		name      string
		failures  []error
		timeout   time.Duration
		wantDials int
		wantErr   error
	}{
		{"accepted at once", nil, time.Minute, 1, nil},
		{"accepted at the third dial", []error{refused, refused}, time.Minute, 3, nil},
		{"refused until the deadline", []error{refused, refused, refused, refused, refused, refused, refused, refused}, 3 * RedialEvery / 2, 2, syscall.ECONNREFUSED},
		{"unreachable: no wait", []error{unreachable, refused}, time.Minute, 1, syscall.EHOSTUNREACH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dials := 0
			dial := PatientDial(func(context.Context, string, string) (net.Conn, error) {
				dials++
				if dials <= len(tc.failures) {
					return nil, tc.failures[dials-1]
				}
				client, server := net.Pipe()
				server.Close()
				return client, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			conn, err := dial(ctx, "tcp", "192.0.2.1:6443")
			if conn != nil {
				conn.Close()
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if dials != tc.wantDials {
				t.Errorf("%d dials, want %d", dials, tc.wantDials)
			}
		})
	}
}
