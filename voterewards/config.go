package voterewards

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
)

// DefaultLookback is how far back a first Run reads by default.
const DefaultLookback = 12 * time.Hour

// MinInterval is the shortest Interval [New] accepts for a History that is
// the real service ([topgg.Client.Loopback] false).
const MinInterval = 10 * time.Second

// VoteLifetime is how long a Top.gg vote stays active.
const VoteLifetime = 12 * time.Hour

// Defaults of the other fields of [Config], and the poller's fixed settings.
const (
	defaultInterval    = time.Minute
	defaultConcurrency = 4
	defaultMaxAttempts = 5
	defaultRetryDelay  = time.Second
	defaultGracePeriod = 10 * time.Second

	overlap       = time.Minute // how far before the newest vote seen a cursorless poll restarts
	cancelWait    = time.Second // how long Run waits for handlers it cancelled; one still running is left behind
	maxRetryDelay = time.Minute // caps the doubling retry delay of a failing handler
	historyMargin = time.Hour   // keeps every startDate inside the service's one-year limit, whatever the clock skew
)

// Config configures a [Poller]. Zero fields take their defaults; only
// OnReward and Store are required.
type Config struct {
	// OnReward is called for every new vote (required).
	OnReward Handler
	// OnExpire, if set, is called once for every delivered vote once it expires.
	OnExpire Handler
	// OnGiveUp, if set, is called from a worker goroutine with a
	// *[DeliveryError] when a handler, or the record of its success, failed
	// MaxAttempts times; the vote stays pending.
	OnGiveUp func(v Vote, err error)

	// Store keeps the state (required); the caller closes it after Run returned.
	Store Store

	// Lookback is how far back the first run reads (default 12h, under a year).
	Lookback time.Duration
	// Interval is the wait between polls once caught up (default 1m, >= [MinInterval]).
	Interval time.Duration
	// Concurrency is how many handler calls run at once, and so how many votes
	// a crash can deliver twice (default 4).
	Concurrency int
	// MaxAttempts is the tries of a handler, or of its record, per vote (default 5).
	MaxAttempts int
	// RetryDelay is the first retry's wait, doubling up to a minute, jittered (default 1s).
	RetryDelay time.Duration
	// GracePeriod is how long handlers may run on after Run's stop before their
	// context is cancelled (default 10s).
	GracePeriod time.Duration

	// StreakGrace is how long after a vote's ExpiresAt the streak holds ([DefaultStreakGrace]).
	StreakGrace time.Duration

	// Observer, if set, is told of the pipeline's events synchronously: it
	// must be safe for concurrent use and quick; a panic in it is logged.
	Observer func(Event)

	// Logger receives the poller's records (default: slog.Default()).
	Logger *slog.Logger

	// clock times every wait; tests set a fake one (export_test.go).
	clock clock.Clock
}

// withDefaults checks c for polling src (a *[topgg.ConfigError]) and fills in its zero fields.
func (c Config) withDefaults(src History) (Config, error) {
	bad := func(field, problem string, args ...any) error {
		return &topgg.ConfigError{Field: "voterewards.Config." + field, Problem: fmt.Sprintf(problem, args...)}
	}
	if c.OnReward == nil {
		return c, bad("OnReward", "is required")
	}
	if typednil.Is(c.Store) {
		return c, bad("Store", "is required (boltstate.Open(dir) or NewMemoryStore())")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Lookback", c.Lookback}, {"Interval", c.Interval}, {"RetryDelay", c.RetryDelay}, {"GracePeriod", c.GracePeriod}, {"StreakGrace", c.StreakGrace}} {
		if d.v < 0 {
			return c, bad(d.name, "is negative (%s)", d.v)
		}
	}
	// A History on this machine (*topgg.Client says) has no floor; against
	// Top.gg, MinInterval keeps a poll to a tenth of v0's 60 calls a minute.
	if r, ok := src.(interface{ Loopback() bool }); ok && !r.Loopback() && c.Interval > 0 && c.Interval < MinInterval {
		return c, bad("Interval", "%s is below %s, the floor that keeps the poll within Top.gg's limits", c.Interval, MinInterval)
	}
	if c.Concurrency < 0 || c.MaxAttempts < 0 {
		return c, bad("Concurrency", "Concurrency and MaxAttempts must not be negative")
	}
	c.Lookback = cmp.Or(c.Lookback, DefaultLookback)
	c.Interval = cmp.Or(c.Interval, defaultInterval)
	c.RetryDelay = cmp.Or(c.RetryDelay, defaultRetryDelay)
	c.GracePeriod = cmp.Or(c.GracePeriod, defaultGracePeriod)
	c.StreakGrace = cmp.Or(c.StreakGrace, DefaultStreakGrace)
	c.Concurrency = cmp.Or(c.Concurrency, defaultConcurrency)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, defaultMaxAttempts)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.clock = clock.Or(c.clock)
	return c, nil
}

// oldestStart returns the oldest startDate the poller sends at now.
func oldestStart(now time.Time) time.Time { return now.AddDate(-1, 0, 0).Add(historyMargin) }
