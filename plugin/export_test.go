package plugin

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock sets the clock of the supervisor and of the check for sessions
// never opened, for tests.
func WithClock(c clock.Clock) Option {
	return func(o *options) error {
		o.clock = c
		return nil
	}
}

// Leading calls what the fleet's leader job calls at the start (true) and
// the end (false) of a term.
func (p *Plugin) Leading(yes bool) { p.leading(yes) }

const DefaultVotePollInterval = defaultVotePollInterval
