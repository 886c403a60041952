package voterewards

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/typednil"
)

// Defaults of [Config].
const (
	DefaultLookback    = 12 * time.Hour
	DefaultInterval    = time.Minute
	DefaultOverlap     = time.Minute
	DefaultConcurrency = 4
	DefaultMaxAttempts = 5
	DefaultRetryDelay  = time.Second
	DefaultGracePeriod = 10 * time.Second
	// CancelWait is how long Run still waits, once the grace period is over
	// and the handlers' context is cancelled, for the handlers to return:
	// a handler still running then ignores its context, and Run returns
	// without it.
	CancelWait = time.Second
)

// MinInterval is the shortest Interval [New] accepts for a History that is the
// real service (a *topgg.Client whose base URL is not on this machine; see
// [topgg.Client.Loopback]). Top.gg publishes no number for its v1 project
// endpoints beyond "stricter" than the rest; the only per-minute limit it
// publishes is v0's 60 calls a minute, with an hour's block past it. An idle
// poll every 10 seconds is 6 calls a minute, a tenth of that, which leaves
// room for the pages of a catch-up and the bot's other calls; a vote seen 10
// seconds later costs nothing (it lasts 12 hours). A 1 ms interval once sent
// 1,355 requests in 2 seconds. Fakes on this machine, and Sources that are
// not a client of the service, have no floor: tests and demos go lower.
const MinInterval = 10 * time.Second

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
	// MaxAttempts times; err is then a *[DeliveryError]. The vote stays
	// pending in the store (the user's later votes are not held up): the next
	// [Poller.Run], or [Poller.Redeliver], calls the handler again. It is
	// also called when the store could not record a handler's outcome after
	// MaxAttempts writes (or once Run's context was done); err is then a
	// *[RecordError], and the vote stays pending too.
	OnGiveUp func(v Vote, err error)

	// Store keeps the cursor, the dedup set and the pending work (required):
	// [OpenStore] for a directory that survives restarts, [NewMemoryStore] for
	// tests. The caller closes it after Run returned.
	Store Store

	// Lookback is how far back the first run reads (default 12h). It is cut to
	// just under one year, the service's limit.
	Lookback time.Duration
	// Interval is the wait between polls once the history is read to its end
	// (default 1m, at least [MinInterval] from the real service).
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
	// GracePeriod is how long running handlers may go on once Run's context
	// is done, before their own context is cancelled (default 10s). Run
	// returns once every handler call has returned, or [CancelWait] after
	// the cancellation, leaving behind a handler that ignores its context.
	GracePeriod time.Duration

	// Observer, if set, is told of the pipeline's events (votes ingested by
	// origin, rewards delivered with their latency, retries, give-ups, the
	// pending count): a hook for metrics. See [Event].
	Observer Observer

	// Logger receives the poller's records (default: slog.Default(), so that
	// a refused token or a vote given up on is seen).
	Logger *slog.Logger

	// clock times every wait (intervals, retries, expiries, pruning, the
	// grace period); tests set a fake one through export_test.go.
	clock clock.Clock
}

// remote is a History that says whether it is a fake on this machine, as
// *topgg.Client does.
type remote interface{ Loopback() bool }

// checkFloor refuses an Interval below MinInterval for a src that is the
// real service.
func (c Config) checkFloor(src History) error {
	if r, ok := src.(remote); ok && !r.Loopback() && c.Interval > 0 && c.Interval < MinInterval {
		return fmt.Errorf("%w: Interval %s is below %s, the floor that keeps the poll within Top.gg's limits",
			ErrBadConfig, c.Interval, MinInterval)
	}
	return nil
}

// withDefaults checks c for polling src and fills in its zero fields.
func (c Config) withDefaults(src History) (Config, error) {
	if c.OnReward == nil {
		return c, ErrNoRewardHandler
	}
	if typednil.Is(c.Store) {
		return c, ErrNoStore
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Lookback", c.Lookback}, {"Interval", c.Interval}, {"Overlap", c.Overlap}, {"RetryDelay", c.RetryDelay}, {"GracePeriod", c.GracePeriod}} {
		if d.v < 0 {
			return c, fmt.Errorf("%w: %s is negative (%s)", ErrBadConfig, d.name, d.v)
		}
	}
	if err := c.checkFloor(src); err != nil {
		return c, err
	}
	if c.Concurrency < 0 || c.MaxAttempts < 0 {
		return c, fmt.Errorf("%w: Concurrency and MaxAttempts must not be negative", ErrBadConfig)
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
	def(&c.GracePeriod, DefaultGracePeriod)
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.clock = clock.Or(c.clock)
	return c, nil
}

// oldestStart returns the oldest startDate the poller sends at now: one year
// back, the service's limit, plus a margin.
func oldestStart(now time.Time) time.Time { return now.AddDate(-1, 0, 0).Add(historyMargin) }
