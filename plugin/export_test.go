package plugin

import (
	"context"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/clock"
)

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

// LoadConfig reads a Config from the environment through lookuper, as a bot
// does with LoadEnv.
func LoadConfig(ctx context.Context, lookuper envconfig.Lookuper) (Config, error) {
	var c Config
	if err := LoadEnv(ctx, &c, lookuper); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Counts returns the counts the poster would post now; zero when autopost is off.
func (p *Plugin) Counts() autopost.Counts {
	if p.counter == nil {
		return autopost.Counts{}
	}
	c, _ := p.counter.Counts(context.Background())
	return c
}
