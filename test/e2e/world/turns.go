package world

import (
	"flag"
	"strconv"
	"sync"
	"testing"
	"time"
)

// turns lets the stories that run side by side take their turns, at most
// limit at once, the long ones first: started last, a story of minutes would
// run on alone after the others ended (testing's own order of parallel tests
// is the runtime's).
type turns struct {
	mu      sync.Mutex
	changed *sync.Cond
	limit   int
	running int
	queue   []*ticket // registered and not yet admitted, in registration order
}

type ticket struct {
	long    bool
	arrived bool // waiting for its turn; until then, it is paused by t.Parallel
}

var stories = func() *turns {
	g := &turns{limit: 1}
	g.changed = sync.NewCond(&g.mu)
	return g
}()

// TakeTurns has the stories take their turns, as many at once as -test.parallel
// says, and lifts testing's own limit, which would otherwise admit them in its
// order: call it in TestMain, after flag.Parse.
func TakeTurns() error {
	parallel := flag.Lookup("test.parallel")
	limit, err := strconv.Atoi(parallel.Value.String())
	if err != nil {
		return err
	}
	stories.limit = max(limit, 1)
	return parallel.Value.Set(strconv.Itoa(1 << 16))
}

// sideBySide runs the rest of t beside the other stories when its turn comes.
func sideBySide(t *testing.T, long bool) {
	tk := stories.register(long)
	t.Parallel()
	queued := time.Now()
	stories.wait(tk)
	t.Cleanup(stories.done)
	t.Logf("its turn came after %s (at most %d stories side by side)", time.Since(queued).Round(time.Second), stories.limit)
}

func (g *turns) register(long bool) *ticket {
	g.mu.Lock()
	defer g.mu.Unlock()
	tk := &ticket{long: long}
	g.queue = append(g.queue, tk)
	return tk
}

// wait waits until tk is the next to run: the first long ticket registered,
// or with none, the first ticket; with a place free.
func (g *turns) wait(tk *ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tk.arrived = true
	g.changed.Broadcast()
	for g.running >= g.limit || g.next() != tk {
		g.changed.Wait()
	}
	g.running++
	g.queue = deleteTicket(g.queue, tk)
	g.changed.Broadcast()
}

// next is the ticket whose turn it is, if it has arrived; nil until then.
func (g *turns) next() *ticket {
	for _, tk := range g.queue {
		if tk.long {
			return arrived(tk)
		}
	}
	if len(g.queue) == 0 {
		return nil
	}
	return arrived(g.queue[0])
}

func arrived(tk *ticket) *ticket {
	if tk.arrived {
		return tk
	}
	return nil
}

func (g *turns) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.changed.Broadcast()
}

func deleteTicket(queue []*ticket, tk *ticket) []*ticket {
	for i, q := range queue {
		if q == tk {
			return append(queue[:i], queue[i+1:]...)
		}
	}
	return queue
}
