package plugin

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Defaults named beyond resolve, which applies every default.
const (
	defaultVotePollInterval = time.Minute
	defaultWebhookPath      = "/topgg/webhook"
)

// Config holds every setting of the plugin and the jobs it wires, with the
// environment variable that sets each (read by [LoadEnv]). Every zero field
// means its default, so plugin.Config{} is valid; SyncCommands and
// VotePollInterval are pointers because their "off" is also their zero:
//
//	cfg := plugin.Config{SyncCommands: new(false), VotePollInterval: new(time.Duration(0))}
//
// Its webhook secrets print as [redacted].
type Config struct {
	// Autopost is "v1" (the default), "v0" or "off".
	Autopost string `env:"TOPGG_AUTOPOST"`
	// AutopostInterval is the time between posts (default 30m, at least autopost.MinInterval).
	AutopostInterval time.Duration `env:"TOPGG_AUTOPOST_INTERVAL"`
	// AutopostRefresh is the longest time without a post (default 3h, at least AutopostInterval).
	AutopostRefresh time.Duration `env:"TOPGG_AUTOPOST_REFRESH"`
	// AutopostReadyTimeout bounds the first post's wait for every READY (default 5m).
	AutopostReadyTimeout time.Duration `env:"TOPGG_AUTOPOST_READY_TIMEOUT"`

	// SyncCommands publishes the bot's slash commands after the first READY (nil: true).
	SyncCommands *bool `env:"TOPGG_SYNC_COMMANDS"`

	// VotePollInterval is the time between vote polls (nil: 1m, else at least
	// voterewards.MinInterval); 0 turns vote polling and all it feeds off.
	VotePollInterval *time.Duration `env:"TOPGG_VOTE_POLL_INTERVAL"`
	// VoteLookback is how far back a first poll reaches (default 12h, at most a year).
	VoteLookback time.Duration `env:"TOPGG_VOTE_LOOKBACK"`
	// VoteConcurrency is how many handler calls run at once (default 4).
	VoteConcurrency int `env:"TOPGG_VOTE_CONCURRENCY"`
	// VoteAttempts is how many calls of a handler one vote gets (default 5).
	VoteAttempts int `env:"TOPGG_VOTE_ATTEMPTS"`
	// VoteRetryDelay is the first retry's wait, doubling up to a minute (default 1s).
	VoteRetryDelay time.Duration `env:"TOPGG_VOTE_RETRY_DELAY"`
	// VoteStopGrace is how long handlers may finish after Run's stop, before their
	// context is cancelled (default 10s).
	VoteStopGrace time.Duration `env:"TOPGG_VOTE_STOP_GRACE"`

	// WebhookAddr is where the webhook receiver listens while Run runs, e.g.
	// ":8080"; empty (the default): mount [Plugin.WebhookHandler] yourself.
	WebhookAddr string `env:"TOPGG_WEBHOOK_ADDR"`
	// WebhookPath is the receiver's path (default "/topgg/webhook").
	WebhookPath string `env:"TOPGG_WEBHOOK_PATH"`
	// WebhookSecrets are the v1 signing secrets ("whs_..."), comma-separated
	// in the environment; with WebhookAuth, they turn the receiver on.
	WebhookSecrets WebhookSecrets `env:"TOPGG_WEBHOOK_SECRET"`
	// WebhookAuth is the legacy v0 webhook's Authorization value.
	WebhookAuth webhook.Secret `env:"TOPGG_WEBHOOK_AUTH"`
}

// WebhookSecrets is a set of v1 webhook secrets; it prints without them.
type WebhookSecrets []webhook.Secret

// UnmarshalText reads a comma-separated list of secrets.
func (w *WebhookSecrets) UnmarshalText(b []byte) error {
	list, err := webhook.SplitSecrets(string(b))
	if err != nil {
		return err
	}
	*w = list
	return nil
}

// check checks the values as set (zero: the default), without the floors of
// [Config.Validate].
func (c Config) check() error {
	bad := func(field, format string, args ...any) error {
		return &topgg.ConfigError{Field: "plugin.Config." + field, Problem: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains([]string{"", "v1", "v0", "off"}, c.Autopost) {
		return bad("Autopost", "is not one of v1, v0, off") // not quoted: a secret set in the wrong variable would show
	}
	for _, f := range []struct {
		field    string
		negative bool
		v        any
	}{
		{"AutopostInterval", c.AutopostInterval < 0, c.AutopostInterval}, {"AutopostRefresh", c.AutopostRefresh < 0, c.AutopostRefresh},
		{"AutopostReadyTimeout", c.AutopostReadyTimeout < 0, c.AutopostReadyTimeout}, {"VoteLookback", c.VoteLookback < 0, c.VoteLookback},
		{"VoteRetryDelay", c.VoteRetryDelay < 0, c.VoteRetryDelay}, {"VoteStopGrace", c.VoteStopGrace < 0, c.VoteStopGrace},
		{"VoteConcurrency", c.VoteConcurrency < 0, c.VoteConcurrency}, {"VoteAttempts", c.VoteAttempts < 0, c.VoteAttempts},
	} {
		if f.negative {
			return bad(f.field, "%v is negative", f.v)
		}
	}
	if c.VotePollInterval != nil && *c.VotePollInterval < 0 {
		return bad("VotePollInterval", "%s is negative (0 turns vote polling off)", *c.VotePollInterval)
	}
	if c.VoteLookback > 365*24*time.Hour {
		return bad("VoteLookback", "%s reaches more than one year back, the service's limit", c.VoteLookback)
	}
	return c.validateWebhook(bad)
}

// Validate checks the values (zero: the default) and the interval floors, which a
// client of this machine is spared (nil: the real service); New calls it.
func (c Config) Validate(client *topgg.Client) error {
	return c.validate(client == nil || !client.Loopback())
}

// validate is Validate with or without the interval floors.
func (c Config) validate(floors bool) error {
	if err := c.check(); err != nil || !floors {
		return err
	}
	const floor = "%s is below %s, the floor that keeps the bot within Top.gg's limits"
	switch {
	case c.AutopostInterval > 0 && c.AutopostInterval < autopost.MinInterval:
		return &topgg.ConfigError{Field: "plugin.Config.AutopostInterval", Problem: fmt.Sprintf(floor, c.AutopostInterval, autopost.MinInterval)}
	case c.VotePollInterval != nil && *c.VotePollInterval > 0 && *c.VotePollInterval < voterewards.MinInterval:
		return &topgg.ConfigError{Field: "plugin.Config.VotePollInterval",
			Problem: fmt.Sprintf(floor+" (0 turns polling off)", *c.VotePollInterval, voterewards.MinInterval)}
	}
	return nil
}

// validateWebhook checks the webhook settings: a receiver needs a secret to
// check deliveries against, and vote polling to reconcile what it loses.
func (c Config) validateWebhook(bad func(field, format string, args ...any) error) error {
	on := len(c.WebhookSecrets) > 0 || c.WebhookAuth != ""
	if err := CheckAddr(c.WebhookAddr); err != nil {
		return bad("WebhookAddr", "%v", err)
	}
	switch {
	case c.WebhookAddr != "" && !on:
		return bad("WebhookSecrets", "is empty, and so is WebhookAuth: the receiver at %s could check no delivery", c.WebhookAddr)
	case on && c.VotePollInterval != nil && *c.VotePollInterval == 0:
		return bad("VotePollInterval", "is 0 (off), but webhooks need the poll to recover the votes whose delivery was lost")
	case strings.HasPrefix(string(c.WebhookAuth), "whs_"):
		return bad("WebhookAuth", "holds a v1 signing secret (whs_...): set it in WebhookSecrets (TOPGG_WEBHOOK_SECRET); WebhookAuth is a v0 webhook's Authorization value")
	case c.WebhookPath != "" && !strings.HasPrefix(c.WebhookPath, "/"):
		return bad("WebhookPath", "does not start with /")
	}
	// What the receiver would refuse is refused here, before the bot goes
	// online, naming the field, never the value.
	for i, s := range c.WebhookSecrets {
		if _, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{s}, OnVote: noVote}); err != nil {
			return bad("WebhookSecrets", "item %d of %d is empty, holds white space or a control character, or does not start with whs_ (a v0 webhook's Authorization value goes in WebhookAuth)", i+1, len(c.WebhookSecrets))
		}
	}
	if c.WebhookAuth != "" {
		if _, err := webhook.New(webhook.Config{LegacyAuth: c.WebhookAuth, OnVote: noVote}); err != nil {
			return bad("WebhookAuth", "holds white space or a control character (a trailing newline?)")
		}
	}
	return nil
}

// PollsVotes reports whether the vote history is polled, which every vote
// feature needs: handlers, the webhook receiver and the voter perks.
func (c Config) PollsVotes() bool { return c.resolve().votePoll > 0 }

// KeepsState reports whether vote polling or command sync, needing [WithState], is on.
func (c Config) KeepsState() bool { s := c.resolve(); return s.votePoll > 0 || s.syncCommands }

// CheckAddr checks an address to listen on, such as Config.WebhookAddr: empty, or
// host:port or :port with a decimal port (0: any free one). Its error quotes addr.
func CheckAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || strconv.FormatUint(n, 10) != port {
		return fmt.Errorf("%q is not host:port or :port with a port from 0 to 65535, such as :8080", addr)
	}
	if strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == '/' }) {
		return fmt.Errorf("%q: the host holds white space or a slash", addr)
	}
	return nil
}

// noVote is the callback of the receivers Validate builds to check secrets.
func noVote(context.Context, webhook.Vote) error { return nil }

// settings is a Config with every default applied: what the jobs run with.
type settings struct {
	Config
	syncCommands bool
	votePoll     time.Duration // 0: off
}

// resolve applies the defaults to a valid Config, never to the caller's.
func (c Config) resolve() settings {
	s := settings{Config: c, syncCommands: true, votePoll: defaultVotePollInterval}
	if c.SyncCommands != nil {
		s.syncCommands = *c.SyncCommands
	}
	if c.VotePollInterval != nil {
		s.votePoll = *c.VotePollInterval
	}
	s.Autopost = cmp.Or(s.Autopost, "v1")
	s.VoteLookback = cmp.Or(s.VoteLookback, voterewards.DefaultLookback)
	s.WebhookPath = cmp.Or(s.WebhookPath, defaultWebhookPath)
	// The autopost intervals and vote settings keep 0: their packages default it.
	return s
}
