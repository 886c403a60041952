package topggtest

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Option configures a [Server]; an invalid value makes NewServer fail.
type Option func(*config) error

type config struct {
	addr        string
	control     bool
	project     Project
	token       string
	now         func() time.Time
	pageSize    int
	legacyLimit int
	legacyWin   time.Duration
	logger      *slog.Logger
	targets     []webhookTarget // the webhook receivers
	hookTimeout time.Duration
	hookDelays  []time.Duration // nil: the defaults of each version
}

func defaultConfig() config {
	return config{
		addr:        "127.0.0.1:0",
		project:     DiscordBot(),
		now:         time.Now,
		pageSize:    100,
		legacyLimit: 60,
		legacyWin:   time.Minute,
		logger:      slog.New(slog.DiscardHandler),
		hookTimeout: defaultWebhookTimeout,
	}
}

// WithProject sets the project that owns the token (default [DiscordBot]).
func WithProject(p Project) Option {
	return func(c *config) error { c.project = p.clone(); return nil }
}

// WithToken sets the token the server accepts (default [ProjectToken] of the
// project's ID); an empty token keeps the default.
func WithToken(token string) Option {
	return func(c *config) error { c.token = token; return nil }
}

// WithNow sets the clock of the service's time rules and recorded requests' At
// (Delay and webhooks use real time); now must be safe for concurrent use.
func WithNow(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errors.New("topggtest: WithNow needs a non-nil clock")
		}
		c.now = now
		return nil
	}
}

// WithPageSize sets the votes per page of the history (default 100, at least 1).
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("topggtest: WithPageSize(%d): need n >= 1", n)
		}
		c.pageSize = n
		return nil
	}
}

// WithLegacyLimit sets the v0 rate limit: at most n requests in any sliding
// window (default 60 per minute); n <= 0 or window <= 0 disables it.
func WithLegacyLimit(n int, window time.Duration) Option {
	return func(c *config) error { c.legacyLimit, c.legacyWin = n, window; return nil }
}

// WithLogger sets the logger of requests, at debug level and never with the
// token (default discard; nil keeps it).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.logger = cmp.Or(l, c.logger); return nil }
}

// WithAddr sets the address the server listens on (default "127.0.0.1:0").
func WithAddr(addr string) Option {
	return func(c *config) error { c.addr = addr; return nil }
}

// WithControlAPI serves the control API under "/control", for a test in any
// language (see cmd/topggfake).
func WithControlAPI() Option {
	return func(c *config) error { c.control = true; return nil }
}
