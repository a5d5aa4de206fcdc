package noderunner

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"
)

// vty asks the router's daemons what vtysh would, over their vty sockets,
// one connection a daemon kept open: the stories ask bgpd for its table every
// 100 ms, and each run of vtysh connects to every daemon and builds its whole
// command tree first, about 30 ms of CPU against 0.1 ms for the question.
//
// The protocol is vtysh's: a command ends with a NUL byte, and the answer
// with three NUL bytes and the command's status (0 for success).
type vty struct {
	dir   string
	mu    sync.Mutex
	conns map[string]net.Conn // by daemon
}

// ask runs a command in a daemon ("bgpd", "bfdd") and returns its output.
func (v *vty) ask(ctx context.Context, daemon, command string) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	conn, err := v.conn(ctx, daemon)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{}) // a cancelled ask's
	defer interruptOn(ctx, conn)()
	out, status, err := exchange(conn, command)
	if err != nil {
		conn.Close()
		delete(v.conns, daemon)
		return nil, fmt.Errorf("%s %q: %w", daemon, command, err)
	}
	if status != 0 {
		return nil, fmt.Errorf("%s %q: status %d: %s", daemon, command, status, out)
	}
	return out, nil
}

func (v *vty) conn(ctx context.Context, daemon string) (net.Conn, error) {
	if c, ok := v.conns[daemon]; ok {
		return c, nil
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(v.dir, daemon+".vty"))
	if err != nil {
		return nil, err
	}
	defer interruptOn(ctx, c)()
	// A connection starts in the view node, as vtysh's does before it enables:
	// some show commands (bfdd's) are the enable node's.
	out, status, err := exchange(c, "enable")
	if err == nil && status != 0 {
		err = fmt.Errorf("status %d: %s", status, out)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: enable: %w", daemon, err)
	}
	if v.conns == nil {
		v.conns = map[string]net.Conn{}
	}
	v.conns[daemon] = c
	return c, nil
}

// interruptOn has a read or write on the connection fail once ctx ends,
// until the function it returns is called. That function returns once ctx's
// end can no longer touch the connection, so that the next ask on it is not
// cut short by this one's context.
func interruptOn(ctx context.Context, conn net.Conn) (release func()) {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = conn.SetDeadline(time.Now())
		close(fired)
	})
	return func() {
		if !stop() {
			<-fired
		}
	}
}

// exchange sends a command and reads its answer.
func exchange(conn net.Conn, command string) ([]byte, byte, error) {
	if _, err := conn.Write(append([]byte(command), 0)); err != nil {
		return nil, 0, err
	}
	var answer []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		answer = append(answer, buf[:n]...)
		if end := len(answer) - 4; end >= 0 && bytes.Equal(answer[end:end+3], []byte{0, 0, 0}) {
			return answer[:end], answer[end+3], nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// close closes the connections.
func (v *vty) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range v.conns {
		c.Close()
	}
	v.conns = nil
}
