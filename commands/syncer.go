package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
)

// Config configures a [Syncer]. The zero value is valid for [Syncer.Sync];
// [Syncer.Run] needs Commands, Session or Ready (with or without Commands).
type Config struct {
	// Store keeps the last published commands' fingerprint (default: memory).
	Store HashStore
	// Logger receives one line per outcome and store warnings (default
	// slog.Default()).
	Logger *slog.Logger
	// Commands are the definitions Run publishes, checked by New; a non-nil
	// empty slice clears the listing's commands.
	Commands []*discordgo.ApplicationCommand
	// Session, for a bot that gives no list, is one of its sessions: once it
	// has its READY, Run reads the application's global commands from Discord
	// through it, every Interval.
	Session *discordgo.Session
	// Ready, for a bot of several shards, replaces Session: it returns a
	// session once one has its READY (or ctx's error); with Commands, Run's
	// first sync waits for it.
	Ready func(ctx context.Context) (*discordgo.Session, error)
	// Interval is the time between two syncs of Run (default 15 minutes).
	Interval time.Duration
	// OnResult, if not nil, is called on Run's goroutine after each sync with
	// its Result and error; it must not block long. A panic in it is
	// recovered and logged.
	OnResult func(ctx context.Context, r Result, err error)

	clock clock.Clock // default: the real clock; tests set a fake
}

// Format prints the Config under every verb (%#v too) without its Session,
// which holds the token.
func (cfg Config) Format(f fmt.State, _ rune) {
	session := "none"
	if cfg.Session != nil {
		session = fmt.Sprintf("shard %d", cfg.Session.ShardID)
	}
	fmt.Fprintf(f, "commands.Config{store: %t, commands: %d, session: %s, ready: %t, interval: %s}",
		cfg.Store != nil, len(cfg.Commands), session, cfg.Ready != nil, cfg.Interval)
}

// LogValue makes slog print the Config as Format does.
func (cfg Config) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(cfg)) }

// Result is the outcome of a sync that did not fail.
type Result struct {
	// Outcome is what the sync did; [OutcomeFailed] beside an error.
	Outcome Outcome
	// Commands is the number of command definitions considered.
	Commands int
	// Hash is the fingerprint of the definitions for this project; empty when
	// the project is not a Discord bot.
	Hash string
}

// Syncer publishes a bot's slash commands to its listing, once per change.
// Make it with [New]. Safe for concurrent use: syncs run one at a time.
type Syncer struct {
	client *topgg.Client
	cfg    Config
	log    *slog.Logger

	// turn serialises syncs, honouring the caller's context as a mutex
	// cannot; its holder owns project.
	turn     chan struct{}
	project  *topgg.Project // learnt on the first successful project read
	running  atomic.Bool
	panicked atomic.Bool // OnResult panicked once: its stack was logged
}

// lock waits for the Syncer's turn, or for ctx to be done.
func (s *Syncer) lock(ctx context.Context) error {
	if s.turn == nil {
		panic("commands: Syncer not made by commands.New") // else a wait for ctx
	}
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Syncer) unlock() { <-s.turn }

// New returns a Syncer that publishes through client; it makes no request.
// It fails with [topgg.ErrNilArgument] for a nil client or typed nil Store, a
// *topgg.ValidationError for invalid Commands, and a *topgg.ConfigError for a
// bad Interval or a Session beside Commands or Ready.
func New(client *topgg.Client, cfg Config) (*Syncer, error) {
	if client == nil {
		return nil, fmt.Errorf("commands: New: %w (*topgg.Client)", topgg.ErrNilArgument)
	}
	if err := cfg.check(client.Loopback()); err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		cfg.Store = &memoryHashStore{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Interval == 0 {
		cfg.Interval = defaultInterval
	}
	cfg.clock = clock.Or(cfg.clock)
	return &Syncer{client: client, cfg: cfg, log: cfg.Logger.With("component", "commands"), turn: make(chan struct{}, 1)}, nil
}

// check refuses a Config New cannot use; loopback lifts the Interval floor.
func (cfg *Config) check(loopback bool) error {
	switch {
	case cfg.Store != nil && typednil.Is(cfg.Store):
		return fmt.Errorf("commands: Config.Store: %w (%T)", topgg.ErrNilArgument, cfg.Store)
	case cfg.Session != nil && (cfg.Commands != nil || cfg.Ready != nil):
		return &topgg.ConfigError{Field: "commands.Config.Session", Problem: "set Commands, Session or Ready (Session alone)"}
	case cfg.Interval < 0:
		return &topgg.ConfigError{Field: "commands.Config.Interval", Problem: "must not be negative"}
	case cfg.Interval > 0 && cfg.Interval < MinInterval && !loopback:
		return &topgg.ConfigError{Field: "commands.Config.Interval", Problem: fmt.Sprintf("%s is below %s, the floor that keeps the job within Top.gg's limits", cfg.Interval, MinInterval)}
	case cfg.Commands != nil:
		return Validate(cfg.Commands)
	}
	return nil
}

// Sync publishes cmds unless they were published last (empty clears them); a
// project not a Discord bot is skipped. Invalid cmds fail before any request; a
// store failure at worst sends them again; service errors are returned wrapped.
func (s *Syncer) Sync(ctx context.Context, cmds []*discordgo.ApplicationCommand) (Result, error) {
	return failed(s.sync(ctx, cmds, nil, nil))
}

// refusal is definitions the service refused for good, which Run does not
// send again.
type refusal struct {
	hash string
	err  error
}

// sync is Sync of cmds, or with a session of the application's global
// commands as Discord has them (Discord is not asked for a project that is
// not a Discord bot); definitions matching refused fail with ErrRefused unsent.
func (s *Syncer) sync(ctx context.Context, cmds []*discordgo.ApplicationCommand, session *discordgo.Session, refused *refusal) (Result, error) {
	var defs []json.RawMessage
	var appID string
	var err error
	if session == nil {
		if defs, err = Normalize(cmds); err != nil {
			return Result{}, err
		}
	} else if appID = applicationID(session); appID == "" {
		return Result{}, errNotReady
	}
	if err := s.lock(ctx); err != nil {
		return Result{Commands: len(defs)}, err
	}
	defer s.unlock()
	p, err := s.readProject(ctx)
	if err != nil {
		return Result{Commands: len(defs)}, err
	}
	if !p.IsDiscordBot() {
		s.log.Info("not publishing slash commands: only a Discord bot project has commands",
			"project_id", p.ID, "platform", string(p.Platform), "type", string(p.Type))
		return Result{Outcome: OutcomeSkipped, Commands: len(defs)}, nil
	}
	if session != nil {
		// A 429 comes back as a *discordgo.RateLimitError for Run to wait out
		// on its clock: discordgo's own wait ignores ctx.
		if cmds, err = session.ApplicationCommands(appID, "", discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false)); err != nil {
			return Result{}, fmt.Errorf("%w: %w", errDiscordFetch, discord.Scrub(session, err))
		}
		if defs, err = Normalize(cmds); err != nil {
			return Result{Commands: len(cmds)}, err
		}
	}
	return s.publish(ctx, p, defs, refused)
}

// readProject returns the token's project, read once. The caller holds the turn.
func (s *Syncer) readProject(ctx context.Context) (*topgg.Project, error) {
	if s.project == nil {
		p, err := s.client.Project(ctx)
		if err != nil {
			return nil, fmt.Errorf("commands: reading the project: %w", err)
		}
		s.project = p
	}
	return s.project, nil
}

// publish sends defs unless saved or refused. The caller holds the turn.
func (s *Syncer) publish(ctx context.Context, p *topgg.Project, defs []json.RawMessage, refused *refusal) (Result, error) {
	res := Result{Commands: len(defs), Hash: fingerprint(p.ID, defs)}
	last, err := s.cfg.Store.LoadHash(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("commands: loading the last hash: %w", err)
		}
		s.log.Warn("cannot read the last sync's hash; publishing anyway", "error", err)
		last = ""
	}
	if last == res.Hash {
		s.log.Info("slash commands unchanged since the last sync; not publishing", "commands", len(defs))
		res.Outcome = OutcomeUnchanged
		return res, nil
	}
	if refused != nil && refused.hash == res.Hash {
		return res, fmt.Errorf("%w: %w", ErrRefused, refused.err)
	}
	if err := clock.CheckTerm(ctx); err != nil {
		return res, fmt.Errorf("commands: %w", err)
	}
	if err := s.client.SetCommands(ctx, defs); err != nil {
		return res, fmt.Errorf("commands: publishing %d command(s): %w", len(defs), err)
	}
	s.log.Info("published slash commands", "commands", len(defs))
	res.Outcome = OutcomePublished
	if err := s.cfg.Store.SaveHash(ctx, res.Hash); err != nil {
		s.log.Warn("published, but cannot save the hash; the next sync will publish again", "error", err)
	}
	return res, nil
}

// fingerprint hashes the project ID with the definitions, so that a new
// token's project is published to.
func fingerprint(projectID string, defs []json.RawMessage) string {
	h := sha256.New()
	_, _ = io.WriteString(h, projectID+"\x00[")
	for i, d := range defs {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(d)
	}
	h.Write([]byte{']'})
	return hex.EncodeToString(h.Sum(nil))
}

// Format prints the Syncer as "commands.Syncer" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Syncer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "commands.Syncer") }
