package tlsprofile

import (
	"crypto/tls"
	"errors"
	"sync/atomic"
)

// Serving is the profile of a running server, which may change while it
// serves: each handshake takes the profile set last. Until one is set,
// handshakes are refused, so that a server never speaks a weaker TLS than
// the cluster's profile allows, not even while it starts.
type Serving struct {
	current atomic.Pointer[Profile]
}

// ErrNotKnown refuses the handshakes that come before the first profile.
var ErrNotKnown = errors.New("the TLS security profile is not known yet")

// Set makes p the profile of the handshakes that follow.
func (s *Serving) Set(p Profile) { s.current.Store(&p) }

// Current is the profile set last, and whether one was.
func (s *Serving) Current() (Profile, bool) {
	p := s.current.Load()
	if p == nil {
		return Profile{}, false
	}
	return *p, true
}

// Configure has base, a server's configuration, answer each handshake with
// base as it is by then (its certificate included) and the current profile.
// It goes in a server's TLS options.
func (s *Serving) Configure(base *tls.Config) {
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		p, ok := s.Current()
		if !ok {
			return nil, ErrNotKnown
		}
		c := base.Clone()
		c.GetConfigForClient = nil
		p.Apply(c)
		return c, nil
	}
}
