package voterewards

import (
	"errors"
	"log/slog"
	"time"
)

// Defaults of [Config].
const (
	DefaultLookback     = 12 * time.Hour
	DefaultInterval     = time.Minute
	DefaultOverlap      = time.Minute
	DefaultConcurrency  = 4
	DefaultMaxAttempts  = 5
	DefaultRetryDelay   = time.Second
	DefaultCloseTimeout = 10 * time.Second
)

// VoteLifetime is how long a Top.gg vote stays active. [Poller.Active] counts
// the vote window as covered once the poller has read the history from at
// least this far back.
const VoteLifetime = 12 * time.Hour

// maxRetryDelay caps the doubling retry delay of a failing handler.
const maxRetryDelay = time.Minute

// historyMargin keeps every startDate this far inside the service's one-year
// limit, so that clock skew and retries never make a request invalid.
const historyMargin = time.Hour

// Config configures a [Poller]. Zero fields take the defaults above; only
// OnReward and Store are required.
type Config struct {
	// OnReward is called for every new vote (required).
	OnReward Handler
	// OnExpire, if set, is called once for every delivered vote when its
	// ExpiresAt passes, e.g. to take a voter role back. A handler that keeps
	// per-user state should check [Poller.Active]: the user may have voted again.
	OnExpire Handler
	// OnGiveUp, if set, is called (from a worker goroutine) when a handler failed
	// MaxAttempts times; err is then a *[DeliveryError], and the vote is
	// recorded as done so that it does not block the user's later votes. It is
	// also called when the store could not record a handler's outcome after
	// MaxAttempts writes (or once Close began); err is then a *[RecordError],
	// and the vote stays pending, to be handled again at the next start.
	OnGiveUp func(v Vote, err error)

	// Store keeps the cursor, the dedup set and the pending work (required):
	// [OpenStore] for a directory that survives restarts, [NewMemoryStore] for
	// tests. The caller closes it after [Poller.Close].
	Store Store

	// Lookback is how far back the first run reads (default 12h). It is cut to
	// just under one year, the service's limit.
	Lookback time.Duration
	// Interval is the wait between polls once the history is read to its end
	// (default 1m).
	Interval time.Duration
	// Overlap is how far before the newest vote seen the poller restarts when
	// the service refuses its cursor or gives none (default 1m).
	Overlap time.Duration
	// Concurrency is how many handler calls run at once (default 4). It also
	// bounds how many votes a crash can deliver twice.
	Concurrency int
	// MaxAttempts is how many times a handler is called for one vote before
	// the poller gives up (default 5); also how many times a failed store
	// write of its outcome is tried.
	MaxAttempts int
	// RetryDelay is the wait before the first retry of a failing handler, or
	// of a failed store write; it doubles on each retry, up to one minute,
	// less a random part of up to half (default 1s).
	RetryDelay time.Duration
	// CloseTimeout is how long [Poller.Close] lets running handlers finish
	// before it cancels their context (default 10s).
	CloseTimeout time.Duration

	// Logger receives the poller's records (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests may set it.
	Now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.OnReward == nil {
		return c, errors.New("voterewards: Config.OnReward is required")
	}
	if c.Store == nil {
		return c, errors.New("voterewards: Config.Store is required (OpenStore(dir) or NewMemoryStore())")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Lookback", c.Lookback}, {"Interval", c.Interval}, {"Overlap", c.Overlap}, {"RetryDelay", c.RetryDelay}, {"CloseTimeout", c.CloseTimeout}} {
		if d.v < 0 {
			return c, errors.New("voterewards: Config." + d.name + " is negative")
		}
	}
	if c.Concurrency < 0 || c.MaxAttempts < 0 {
		return c, errors.New("voterewards: Config.Concurrency and MaxAttempts must not be negative")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Lookback, DefaultLookback)
	def(&c.Interval, DefaultInterval)
	def(&c.Overlap, DefaultOverlap)
	def(&c.RetryDelay, DefaultRetryDelay)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// oldestStart returns the oldest startDate the poller sends at now: one year
// back, the service's limit, plus a margin.
func oldestStart(now time.Time) time.Time { return now.AddDate(-1, 0, 0).Add(historyMargin) }
