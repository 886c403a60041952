package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg"
)

// defaultJobInterval is the time between two syncs of a [Job].
const defaultJobInterval = 15 * time.Minute

// MinJobInterval is the shortest JobConfig.Interval [NewJob] accepts for a
// client of the real service: a failing sync is retried within the interval,
// so a shorter one would send Top.gg a PUT of the commands as often (its v1
// project endpoints have "stricter" limits, with no number published). A
// client of a fake on this machine ([topgg.Client.Loopback]) has no floor.
const MinJobInterval = time.Minute

// ErrJobSource means a JobConfig says neither what to publish nor where to
// read it (none of Commands, Session and Ready), or sets Session beside
// Commands or Ready.
var ErrJobSource = errors.New("commands: JobConfig: set Commands, Session or Ready (Session alone)")

// JobConfig configures a [Job]: Commands, Session, or Ready (with or without
// Commands).
type JobConfig struct {
	// Commands are the definitions to publish, as the bot registers them on
	// Discord. A non-nil empty slice clears the listing's commands. They
	// are checked against Discord's rules by NewJob.
	Commands []*discordgo.ApplicationCommand
	// Session, for a bot that gives no list, is one of its sessions: once
	// it has its READY, the application's global commands are read from
	// Discord through it (GET /applications/{id}/commands). A bot often
	// registers its commands after READY, so the Job reads them again every
	// Interval; an unchanged list costs one Discord GET and no Top.gg call.
	Session *discordgo.Session
	// Ready, for a bot of several sessions (shards), replaces Session: Run
	// calls it first, and it returns once one of them has its READY, with
	// that session (or with ctx's error). Without Commands, the commands are
	// read from Discord through that session; with them, the first sync
	// waits for it.
	Ready func(ctx context.Context) (*discordgo.Session, error)
	// Interval is the time between two syncs (default 15 minutes).
	Interval time.Duration
	// OnResult, if not nil, is called after each sync with its outcome:
	// the Result, and the error when it failed (a *topgg.ValidationError,
	// *topgg.APIError, *topgg.RateLimitError, a Discord failure, ...), and
	// Run's context. It runs on the Job's goroutine, must not block for
	// long, and a panic in it is recovered and logged.
	OnResult func(ctx context.Context, r Result, err error)
	// Logger receives the failures (default: slog.Default(), so that a refused token is seen).
	Logger *slog.Logger

	clock clock.Clock // default: the real clock; tests set a fake
}

// Job runs a [Syncer] as a long-running job: it syncs once when Run starts
// (with a Session or Ready, once a session has its READY) and again every
// Interval, and reports each outcome to OnResult. A failure worth retrying
// (topgg.Retryable, or a Discord 5xx, 429 or connection failure) is retried
// with backoff, never before the service's Retry-After. Definitions the
// service refused are not retried: the same definitions are not sent again,
// only changed ones, at the next Interval. A refused token ends Run with
// the error (wrapping topgg.ErrUnauthorized): no sync can pass until the
// token is replaced.
//
// Make it with [NewJob]; a zero or nil Job fails Run with
// [topgg.ErrNotConfigured]. Run may be called again after it returned.
type Job struct {
	syncer  *Syncer
	cfg     JobConfig
	log     *slog.Logger
	running atomic.Bool
}

// NewJob returns a Job that syncs with s. It fails with [topgg.ErrNotConfigured]
// for a nil or zero Syncer, [ErrJobSource] for a JobConfig with none of
// Commands, Session and Ready or with Session beside one of them, a
// *topgg.ValidationError for Commands that break Discord's rules, and an
// error for a negative Interval or one below [MinJobInterval] for a client
// of the real service.
func NewJob(s *Syncer, cfg JobConfig) (*Job, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	if err := cfg.check(s.client.Loopback()); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = defaultJobInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.clock = clock.Or(cfg.clock)
	return &Job{syncer: s, cfg: cfg, log: cfg.Logger.With("component", "commands")}, nil
}

// check refuses a JobConfig NewJob cannot run; loopback lifts the interval
// floor (a fake service on this machine).
func (cfg *JobConfig) check(loopback bool) error {
	if (cfg.Session != nil) == (cfg.Commands != nil || cfg.Ready != nil) {
		return ErrJobSource
	}
	if cfg.Commands != nil {
		if err := Validate(cfg.Commands); err != nil {
			return err
		}
	}
	switch {
	case cfg.Interval < 0:
		return errors.New("commands: JobConfig.Interval: must not be negative")
	case cfg.Interval > 0 && cfg.Interval < MinJobInterval && !loopback:
		return fmt.Errorf("commands: JobConfig.Interval: %s is below %s, the floor that keeps the job within Top.gg's limits", cfg.Interval, MinJobInterval)
	}
	return nil
}

// Run syncs until ctx is done, then returns nil; nothing it started outlives
// it. It returns the error of a refused token (wrapping
// topgg.ErrUnauthorized, after reporting it), [topgg.ErrRunning] while another Run
// of the Job runs and [topgg.ErrNotConfigured] on a zero Job.
func (j *Job) Run(ctx context.Context) error {
	if j == nil || j.syncer == nil {
		return errNotMade
	}
	if !j.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer j.running.Store(false)
	session, ok := j.session(ctx)
	if !ok {
		return nil
	}
	var refused *refusal
	failures := 0
	for {
		res, err := j.once(ctx, session, refused)
		if ctx.Err() != nil {
			return nil
		}
		wait := j.cfg.Interval
		switch {
		case err == nil:
			failures, refused = 0, nil
			j.report(ctx, res, nil)
		case errors.Is(err, topgg.ErrUnauthorized):
			j.report(ctx, res, err)
			return err
		case errors.Is(err, ErrRefused):
			// Reported when it was refused; these are the same definitions.
			j.log.Debug("definitions unchanged since the service refused them; not sent again")
		case retryable(err):
			failures++
			wait = retryWait(failures, err, j.cfg.Interval)
			j.report(ctx, res, err)
		default:
			if res.Hash != "" {
				refused = &refusal{hash: res.Hash, err: err}
			}
			j.report(ctx, res, err)
		}
		if clock.Sleep(ctx, j.cfg.clock, wait) != nil {
			return nil
		}
	}
}

// session waits for the session the commands are read through (or whose
// READY the first sync waits for): nil without Session and Ready. It
// reports false when ctx ended first.
func (j *Job) session(ctx context.Context) (*discordgo.Session, bool) {
	switch {
	case j.cfg.Session != nil:
		return j.cfg.Session, waitReady(ctx, j.cfg.Session)
	case j.cfg.Ready != nil:
		s, err := j.cfg.Ready(ctx)
		return s, err == nil && s != nil && ctx.Err() == nil
	}
	return nil, true
}

func (j *Job) once(ctx context.Context, session *discordgo.Session, refused *refusal) (Result, error) {
	if err := term.Check(ctx); err != nil { // a fleet leader past its term reads and publishes nothing
		return Result{}, fmt.Errorf("commands: %w", err)
	}
	if j.cfg.Commands == nil {
		return failed(j.syncer.syncFromDiscord(ctx, session, refused))
	}
	return failed(j.syncer.sync(ctx, j.cfg.Commands, refused))
}

// report logs a failure and calls OnResult.
func (j *Job) report(ctx context.Context, res Result, err error) {
	switch {
	case err == nil:
	case retryable(err):
		j.log.LogAttrs(ctx, slog.LevelWarn, "could not publish the slash commands; retrying",
			slog.String("error", err.Error()))
	default:
		j.log.LogAttrs(ctx, slog.LevelError, "Top.gg refused the slash commands; not sent again until they change",
			slog.String("error", err.Error()))
	}
	if j.cfg.OnResult == nil {
		return
	}
	if rec := panics.Try(func() { j.cfg.OnResult(ctx, res, err) }); rec != nil {
		j.log.LogAttrs(ctx, slog.LevelError, "OnResult panicked", slog.String("panic", fmt.Sprint(rec.Value)))
	}
}

// retryable reports whether a failed sync may succeed unchanged later: what
// topgg.Retryable says of Top.gg's errors, and for Discord's, a connection
// failure, a 5xx or a 429.
func retryable(err error) bool {
	if topgg.Retryable(err) {
		return true
	}
	if !errors.Is(err, errDiscordFetch) {
		return false
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		code := rest.Response.StatusCode
		return code >= 500 || code == http.StatusTooManyRequests
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// retryWait is the wait before retry n: backoff from 5 seconds up to
// interval, and never less than the service's Retry-After.
func retryWait(n int, err error, interval time.Duration) time.Duration {
	wait := backoff.Exp(n, min(5*time.Second, interval), interval)
	var rl *topgg.RateLimitError
	if errors.As(err, &rl) {
		wait = max(wait, rl.RetryAfter)
	}
	return wait
}

// waitReady waits until session has its READY (the application id is
// known), or ctx is done; it reports which.
func waitReady(ctx context.Context, session *discordgo.Session) bool {
	if applicationID(session) != "" {
		return true
	}
	ready := make(chan struct{}, 1)
	// discordgo's State takes READY before the handlers run, so the id is
	// known when this one runs.
	remove := session.AddHandler(func(*discordgo.Session, *discordgo.Ready) {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	defer remove()
	for applicationID(session) == "" {
		select {
		case <-ctx.Done():
			return false
		case <-ready:
		}
	}
	return true
}

// Outcome says what one sync did: a small fixed set, fit for a metrics
// label. Its zero value is no outcome.
type Outcome uint8

// Outcomes of a sync, as [Result.Outcome] names them.
const (
	// OutcomePublished: the definitions were sent and the service took them.
	OutcomePublished Outcome = iota + 1
	// OutcomeUnchanged: nothing was sent, the definitions being those
	// published last.
	OutcomeUnchanged
	// OutcomeSkipped: nothing was sent for another reason (the project is
	// not a Discord bot).
	OutcomeSkipped
	// OutcomeFailed: the sync failed.
	OutcomeFailed
)

// String returns the outcome's label value, such as "published", or
// "unknown". It does not allocate.
func (o Outcome) String() string {
	switch o {
	case OutcomePublished:
		return "published"
	case OutcomeUnchanged:
		return "unchanged"
	case OutcomeSkipped:
		return "skipped"
	case OutcomeFailed:
		return "failed"
	}
	return "unknown"
}

// failed sets the Outcome of a sync that returned an error.
func failed(r Result, err error) (Result, error) {
	if err != nil {
		r.Outcome = OutcomeFailed
	}
	return r, err
}
