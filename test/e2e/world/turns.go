package world

import (
	"flag"
	"strconv"
	"sync"
	"testing"
	"time"
)

// turns lets the stories take their turns, at most limit at once, the long
// ones first: started last, a story of minutes would run on alone after the
// others ended (testing's own order of parallel tests is the runtime's). The
// stories Last come once every other has ended, side by side with one another.
type turns struct {
	mu      sync.Mutex
	changed *sync.Cond
	limit   int
	running int
	last    int       // how many of those running are Last
	queue   []*ticket // registered and not yet admitted, in registration order
}

type ticket struct {
	mode    Mode
	arrived bool // waiting for its turn; until then, it is paused by t.Parallel
}

// fits tells whether tk may run beside those running: within the limit, and
// a story Last beside no other kind.
func (g *turns) fits(tk *ticket) bool {
	if g.running >= g.limit {
		return false
	}
	if tk.mode == Last {
		return g.running == g.last
	}
	return g.last == 0
}

var stories = newTurns(1)

func newTurns(limit int) *turns {
	g := &turns{limit: limit}
	g.changed = sync.NewCond(&g.mu)
	return g
}

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

// SideBySide runs the rest of the story t when its turn comes (t.Parallel,
// then the turn mode gives it). Enter calls it; a story that needs no test
// network calls it first thing.
func SideBySide(t *testing.T, mode Mode) {
	tk := stories.register(mode)
	t.Parallel()
	queued := time.Now()
	stories.wait(tk)
	t.Cleanup(func() { stories.done(tk) })
	t.Logf("its turn came after %s (at most %d stories side by side)", time.Since(queued).Round(time.Second), stories.limit)
}

func (g *turns) register(mode Mode) *ticket {
	g.mu.Lock()
	defer g.mu.Unlock()
	tk := &ticket{mode: mode}
	g.queue = append(g.queue, tk)
	return tk
}

// wait waits until tk is the next to run, the first registered of the first
// mode among Long, Beside and Last, and it fits.
func (g *turns) wait(tk *ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tk.arrived = true
	g.changed.Broadcast()
	for !g.fits(tk) || g.next() != tk {
		g.changed.Wait()
	}
	g.running++
	if tk.mode == Last {
		g.last++
	}
	g.queue = deleteTicket(g.queue, tk)
	g.changed.Broadcast()
}

// next is the ticket whose turn it is, if it has arrived; nil until then.
func (g *turns) next() *ticket {
	for _, mode := range []Mode{Long, Beside, Last} {
		for _, tk := range g.queue {
			if tk.mode == mode {
				return arrived(tk)
			}
		}
	}
	return nil
}

func arrived(tk *ticket) *ticket {
	if tk.arrived {
		return tk
	}
	return nil
}

func (g *turns) done(tk *ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if tk.mode == Last {
		g.last--
	}
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
