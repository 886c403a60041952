package topggtest

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Option configures a [Server] at [NewServer]. An option that gets an
// invalid value makes NewServer fail.
type Option func(*config) error

type config struct {
	project     Project
	token       string
	now         func() time.Time
	pageSize    int
	legacyLimit int
	legacyWin   time.Duration
	logger      *slog.Logger
	webhooks    webhookConfig
}

func defaultConfig() config {
	return config{
		project:     DiscordBot(),
		now:         time.Now,
		pageSize:    100,
		legacyLimit: 60,
		legacyWin:   time.Minute,
		logger:      slog.New(slog.DiscardHandler),
	}
}

// WithProject sets the project that owns the token (default [DiscordBot]).
// Unless [WithToken] is given, the token is [ProjectToken] of its ID.
func WithProject(p Project) Option {
	return func(c *config) error { c.project = p.clone(); return nil }
}

// WithToken sets the token the server accepts instead of the default
// [ProjectToken]; an empty token keeps the default.
func WithToken(token string) Option {
	return func(c *config) error { c.token = token; return nil }
}

// WithNow sets the clock behind every time rule: vote defaults and expiry,
// the v0 12-hour check, the announcement cooldown, the one-year startDate
// limit, the 5-minute future limit of batch timestamps, the v0 rate-limit
// window and the At times of recorded requests. Delays injected with
// [Fault] use real time. now must be safe for concurrent use; a nil now
// makes NewServer fail.
func WithNow(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errors.New("topggtest: WithNow needs a non-nil clock")
		}
		c.now = now
		return nil
	}
}

// WithPageSize sets how many votes one page of GET /v1/projects/@me/votes
// holds (default 100). NewServer fails if n < 1.
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("topggtest: WithPageSize(%d): need n >= 1", n)
		}
		c.pageSize = n
		return nil
	}
}

// WithLegacyLimit sets the v0 rate limit: at most n requests per token in
// any sliding window of the given length (default 60 per minute). n <= 0 or
// window <= 0 disables the limit.
func WithLegacyLimit(n int, window time.Duration) Option {
	return func(c *config) error { c.legacyLimit, c.legacyWin = n, window; return nil }
}

// WithLogger sets the logger for request and fault records (debug level).
// The token is never logged. Default: discard; nil keeps the default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l != nil {
			c.logger = l
		}
		return nil
	}
}
