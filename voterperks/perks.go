package voterperks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Votes is what the perks read of the votes; *voterewards.Poller implements
// it. Active must answer from memory: the gate calls it on every interaction.
type Votes interface {
	Active(userID string) voterewards.Status
}

var _ Votes = (*voterewards.Poller)(nil)

// Role is the voter role, given in GuildID to every voter while their vote is active.
type Role struct {
	GuildID, RoleID string
}

// Config configures [New]. BotID, Session and State are required; each feature
// is off unless its field turns it on.
type Config struct {
	// BotID is the bot's Discord id, for the vote link. Required.
	BotID string
	// Session returns any open session of the bot, for the REST calls (roles,
	// direct messages); nil while none is. Required.
	Session func() *discordgo.Session
	// State is the bot's state: the ledger /vote and /leaderboard read, and
	// the reminder opt-ins. Required.
	State voterewards.State
	// Role, if set, is the voter role ([Perks.OnReward], [Perks.OnExpire]).
	Role *Role
	// Reminders turns reminders on: a user who opts in gets a direct message
	// when each vote expires.
	Reminders bool
	// Texts overrides what the perks say; a zero field keeps its default.
	Texts Texts
	// Logger receives the perks' records (default slog.Default()).
	Logger *slog.Logger

	clock        clock.Clock   // tests set a fake one (export_test.go)
	answerWithin time.Duration // tests shorten it (export_test.go)
}

// Perks is the bot's voter features. Make it with [New]; safe for concurrent use.
type Perks struct {
	votes  Votes
	cfg    Config
	log    *slog.Logger
	texts  Texts
	gated  sync.Map // the command names given to Gate
	warned sync.Map // the Discord error codes (403s: with their status) warned of once
	limits sync.Map // route kind ("role", "dm") -> *rateLimit: Discord's last 429 on it
}

// rateLimit is Discord's last 429 on a kind of leader write, and when its retry_after ends.
type rateLimit struct {
	until time.Time
	err   error
}

// Errors of the handlers and of [Perks.SetReminder], for errors.Is.
var (
	// ErrNoSession is returned by a handler while Config.Session gives none,
	// for voterewards to retry.
	ErrNoSession = errors.New("voterperks: no Discord session to call through")
	// ErrRemindersOff is returned by [Perks.SetReminder] without Config.Reminders.
	ErrRemindersOff = errors.New("voterperks: reminders are off")
	// errNoText stands for a text function that failed, in its fallback's info.
	errNoText = errors.New("voterperks: the text function failed")
)

// New returns the perks of cfg over votes; it makes no request. Errors: a nil
// votes, [topgg.ErrNilArgument]; a Config field it refuses, a *[topgg.ConfigError].
func New(votes Votes, cfg Config) (*Perks, error) {
	if typednil.Is(votes) {
		return nil, fmt.Errorf("voterperks: New: %w (Votes)", topgg.ErrNilArgument)
	}
	bad := func(field, problem string) error {
		return &topgg.ConfigError{Field: "voterperks.Config." + field, Problem: problem}
	}
	if !discord.ValidID(cfg.BotID) {
		return nil, bad("BotID", fmt.Sprintf("%q is not a Discord id", cfg.BotID))
	}
	if cfg.Session == nil {
		return nil, bad("Session", "is required")
	}
	if r := cfg.Role; r != nil && (!discord.ValidID(r.GuildID) || !discord.ValidID(r.RoleID)) {
		return nil, bad("Role", fmt.Sprintf("{%q, %q}: the guild and the role must be Discord ids", r.GuildID, r.RoleID))
	}
	if typednil.Is(cfg.State) {
		return nil, bad("State", "is required (the state the bot's votes are in)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.clock = clock.Or(cfg.clock)
	return &Perks{votes: votes, cfg: cfg, log: cfg.Logger.With("component", "voterperks"), texts: cfg.Texts.withDefaults()}, nil
}

// voteURL returns the bot's vote page: https://top.gg/bot/BotID/vote.
func (p *Perks) voteURL() string { return "https://top.gg/bot/" + p.cfg.BotID + "/vote" }

// session returns the session of the REST calls.
func (p *Perks) session() (*discordgo.Session, error) {
	if s := p.cfg.Session(); s != nil {
		return s, nil
	}
	return nil, ErrNoSession
}

// SetReminder records, durably, whether userID wants a direct message when they
// can vote again. Errors: [ErrRemindersOff] without Config.Reminders, a
// *[topgg.ValidationError] for a userID that is no Discord id.
func (p *Perks) SetReminder(ctx context.Context, userID string, on bool) error {
	if !p.cfg.Reminders {
		return ErrRemindersOff
	}
	if !discord.ValidID(userID) {
		return &topgg.ValidationError{Field: "userID", Problem: fmt.Sprintf("%q is not a Discord id", userID), Rule: "a Discord snowflake"}
	}
	if err := p.cfg.State.SetReminder(ctx, userID, on); err != nil {
		return fmt.Errorf("voterperks: saving the reminder choice: %w", err)
	}
	return nil
}

// restCode returns Discord's JSON error code and the HTTP status in err, or zeros.
func restCode(err error) (code, status int) {
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		return 0, 0
	}
	if re.Message != nil {
		code = re.Message.Code
	}
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	return code, status
}

// Format prints the Perks as "voterperks.Perks" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Perks) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "voterperks.Perks") }

// limited returns the last 429's error of the kind's routes while its
// retry_after runs: a call then would wait it out in discordgo's rate limiter,
// deaf to ctx and past the term checked before it.
func (p *Perks) limited(kind string) error {
	if l, ok := p.limits.Load(kind); ok && p.cfg.clock.Now().Before(l.(*rateLimit).until) {
		return fmt.Errorf("not calling Discord within the retry_after of its 429: %w", l.(*rateLimit).err)
	}
	return nil
}

// noteLimit keeps the retry_after of a 429 in err, for limited.
func (p *Perks) noteLimit(kind string, err error) {
	if rl, ok := errors.AsType[*discordgo.RateLimitError](err); ok && rl.RateLimit != nil && rl.TooManyRequests != nil {
		p.limits.Store(kind, &rateLimit{until: p.cfg.clock.Now().Add(rl.RetryAfter), err: err})
	}
}

// leaderCall is the options of a leader's Discord write: the call ends with
// ctx, and discordgo neither waits out a 429 nor resends a 502 itself, since
// a resend would skip the term check before it. The error goes back to the
// vote pipeline, which retries after checking the term again.
func leaderCall(ctx context.Context, more ...discordgo.RequestOption) []discordgo.RequestOption {
	return append([]discordgo.RequestOption{
		discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false), discordgo.WithRestRetries(0),
	}, more...)
}
