package autopost

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
)

// Mode selects the interface the Poster posts to.
type Mode int

const (
	// ModeV1, the default, posts the project's v1 metrics and backfills missed
	// samples with a metrics batch.
	ModeV1 Mode = iota
	// ModeV0 posts the legacy bot stats with the per-shard list, for the bot
	// id of Counts.BotID; it has no backfill.
	ModeV0
)

// Defaults of the Config fields left zero.
const (
	// defaultInterval is the time between two posts.
	defaultInterval = 30 * time.Minute
	// MinInterval is the shortest Interval [New] accepts, to stay within
	// Top.gg's limits; it does not apply to a [topgg.Client.Loopback] client.
	MinInterval = 15 * time.Minute
	// defaultRefresh is the longest time without a post.
	defaultRefresh = 3 * time.Hour
	// defaultReadyTimeout is how long the first post waits for every shard.
	defaultReadyTimeout = 5 * time.Minute
	// maxBackfill is the most missed samples kept: one metrics batch.
	maxBackfill = topgg.MaxBatch
)

// Config configures a Poster. The zero value is usable: v1, every 30 minutes.
type Config struct {
	// Mode selects v1 metrics (default) or v0 bot stats.
	Mode Mode
	// Interval is the time between two posts (default 30 minutes, at least
	// [MinInterval]).
	Interval time.Duration
	// Refresh is the longest time between two posts of unchanged numbers
	// (default 3 hours, at least Interval).
	Refresh time.Duration
	// ReadyTimeout is how long the first post waits for every shard's READY
	// before naming the missing in a warning and a skipped Result (default 5
	// minutes); the Poster goes on waiting.
	ReadyTimeout time.Duration
	// ShardCount is the bot's total number of shards for the Poster's own
	// Counter (see [NewCounter]); it must be zero when Source is set.
	ShardCount int
	// Source gives the numbers to post (default: the Poster's own [Counter],
	// fed by [Poster.Attach]).
	Source Source
	// MaxBackfill is how many missed samples are kept while the service is
	// unreachable (default and maximum 100; negative turns backfill off).
	MaxBackfill int
	// OnPost, if not nil, is called from the Poster's goroutine after each post
	// attempt; it must not block long. A panic in it is recovered and logged.
	OnPost func(Result)
	// Logger receives one line per post and the warnings (default slog.Default()).
	Logger *slog.Logger

	// clock times the waits (default: the real clock); tests set a fake.
	clock clock.Clock
}

// withDefaults checks c (local: a client of a fake) and fills in its zero fields.
func (c Config) withDefaults(local bool) (Config, error) {
	if err := c.check(); err != nil {
		return c, err
	}
	if c.Interval > 0 && c.Interval < MinInterval && !local {
		return c, &topgg.ConfigError{Field: "autopost.Config.Interval", Problem: fmt.Sprintf("%s is below %s, the floor that keeps the bot within Top.gg's limits", c.Interval, MinInterval)}
	}
	c.clock = clock.Or(c.clock)
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.Refresh == 0 {
		c.Refresh = defaultRefresh
	}
	c.Refresh = max(c.Refresh, c.Interval)
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = defaultReadyTimeout
	}
	switch {
	case c.MaxBackfill == 0:
		c.MaxBackfill = maxBackfill
	case c.MaxBackfill < 0:
		c.MaxBackfill = 0
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// check returns a *topgg.ConfigError for the first invalid field of c, or nil.
func (c Config) check() error {
	const negative = "must not be negative"
	switch {
	case c.Mode != ModeV1 && c.Mode != ModeV0:
		return &topgg.ConfigError{Field: "autopost.Config.Mode", Problem: fmt.Sprintf("unknown mode %d", int(c.Mode))}
	case c.Interval < 0:
		return &topgg.ConfigError{Field: "autopost.Config.Interval", Problem: negative}
	case c.Refresh < 0:
		return &topgg.ConfigError{Field: "autopost.Config.Refresh", Problem: negative}
	case c.ReadyTimeout < 0:
		return &topgg.ConfigError{Field: "autopost.Config.ReadyTimeout", Problem: negative}
	case c.ShardCount < 0:
		return &topgg.ConfigError{Field: "autopost.Config.ShardCount", Problem: negative}
	case c.MaxBackfill > maxBackfill:
		return &topgg.ConfigError{Field: "autopost.Config.MaxBackfill", Problem: fmt.Sprintf("%d is over %d (one metrics batch)", c.MaxBackfill, maxBackfill)}
	case c.Source != nil && typednil.Is(c.Source):
		return &topgg.ConfigError{Field: "autopost.Config.Source", Problem: "is a nil pointer"}
	case c.Source != nil && c.ShardCount != 0:
		return &topgg.ConfigError{Field: "autopost.Config.ShardCount", Problem: "must be zero when Source is set (the Source gives the shard count)"}
	}
	return nil
}
