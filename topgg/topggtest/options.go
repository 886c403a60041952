package topggtest

import (
	"log/slog"
	"time"
)

// Option configures a [Server] at [NewServer].
type Option func(*config)

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
	return func(c *config) { c.project = p.clone() }
}

// WithToken sets the token the server accepts instead of the default
// [ProjectToken]; an empty token keeps the default.
func WithToken(token string) Option {
	return func(c *config) { c.token = token }
}

// WithNow sets the clock behind every time rule: vote defaults and expiry,
// the v0 12-hour check, the announcement cooldown, the one-year startDate
// limit, the 5-minute future limit of batch timestamps, the v0 rate-limit
// window and the At times of recorded requests. Delays injected with
// [Fault] use real time. now must be safe for concurrent use.
func WithNow(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithPageSize sets how many votes one page of GET /v1/projects/@me/votes
// holds (default 100). NewServer panics if n < 1.
func WithPageSize(n int) Option {
	return func(c *config) { c.pageSize = n }
}

// WithLegacyLimit sets the v0 rate limit: at most n requests per token in
// any sliding window of the given length (default 60 per minute). n <= 0 or
// window <= 0 disables the limit.
func WithLegacyLimit(n int, window time.Duration) Option {
	return func(c *config) { c.legacyLimit, c.legacyWin = n, window }
}

// WithLogger sets the logger for request and fault records (debug level).
// The token is never logged. Default: discard.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
