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

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// defaultJobInterval is the time between two syncs of a [Job].
const defaultJobInterval = 15 * time.Minute

// MinJobInterval is the shortest JobConfig.Interval [NewJob] accepts, to stay
// within Top.gg's limits; it does not apply to a [topgg.Client.Loopback] client.
const MinJobInterval = time.Minute

// JobConfig configures a [Job]: Commands, Session, or Ready (with or without
// Commands).
type JobConfig struct {
	// Commands are the definitions to publish, checked by NewJob; a non-nil
	// empty slice clears the listing's commands.
	Commands []*discordgo.ApplicationCommand
	// Session, for a bot that gives no list, is one of its sessions: once it
	// has its READY, the application's global commands are read from Discord
	// through it, every Interval.
	Session *discordgo.Session
	// Ready, for a bot of several shards, replaces Session: it returns a
	// session once one has its READY (or ctx's error); with Commands, the
	// first sync waits for it.
	Ready func(ctx context.Context) (*discordgo.Session, error)
	// Interval is the time between two syncs (default 15 minutes).
	Interval time.Duration
	// OnResult, if not nil, is called on the Job's goroutine after each sync
	// with its Result and error; it must not block long. A panic in it is
	// recovered and logged.
	OnResult func(ctx context.Context, r Result, err error)

	clock clock.Clock // default: the real clock; tests set a fake
}

// Job runs a [Syncer] at start and every Interval, reporting each outcome to
// OnResult and logging failures to the Syncer's Logger. Transient failures are retried with backoff, never before
// Retry-After; refused definitions are not sent again until they change.
// Make it with [NewJob].
type Job struct {
	panicked atomic.Bool // OnResult panicked once: its stack was logged
	syncer   *Syncer
	cfg      JobConfig
	log      *slog.Logger
	running  atomic.Bool
}

// NewJob returns a Job that syncs with s. It fails with
// [topgg.ErrNilArgument] for a nil s, a *topgg.ValidationError for invalid
// Commands, and a *topgg.ConfigError for a bad Interval or source (none of
// Commands, Session and Ready, or Session beside another).
func NewJob(s *Syncer, cfg JobConfig) (*Job, error) {
	if s == nil {
		return nil, fmt.Errorf("commands: NewJob: %w (*Syncer)", topgg.ErrNilArgument)
	}
	if err := cfg.check(s.client.Loopback()); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = defaultJobInterval
	}
	cfg.clock = clock.Or(cfg.clock)
	return &Job{syncer: s, cfg: cfg, log: s.log}, nil
}

// check refuses a JobConfig NewJob cannot run; loopback lifts the floor.
func (cfg *JobConfig) check(loopback bool) error {
	if (cfg.Session != nil) == (cfg.Commands != nil || cfg.Ready != nil) {
		return &topgg.ConfigError{Field: "commands.JobConfig.Session", Problem: "set Commands, Session or Ready (Session alone)"}
	}
	if cfg.Commands != nil {
		if err := Validate(cfg.Commands); err != nil {
			return err
		}
	}
	switch {
	case cfg.Interval < 0:
		return &topgg.ConfigError{Field: "commands.JobConfig.Interval", Problem: "must not be negative"}
	case cfg.Interval > 0 && cfg.Interval < MinJobInterval && !loopback:
		return &topgg.ConfigError{Field: "commands.JobConfig.Interval", Problem: fmt.Sprintf("%s is below %s, the floor that keeps the job within Top.gg's limits", cfg.Interval, MinJobInterval)}
	}
	return nil
}

// Run syncs until ctx is done, then returns nil, leaving nothing running; it
// may run again after it returned. It returns a refused token's error
// (wrapping topgg.ErrUnauthorized) and [topgg.ErrRunning] while another Run
// runs.
func (j *Job) Run(ctx context.Context) error {
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

// session waits for the session of Session or Ready (nil without them);
// false when ctx ended first.
func (j *Job) session(ctx context.Context) (*discordgo.Session, bool) {
	switch {
	case j.cfg.Session != nil:
		return j.cfg.Session, waitReady(ctx, j.cfg.Session)
	case j.cfg.Ready != nil:
		var s *discordgo.Session
		var err error
		if rec := panics.Try(func() { s, err = j.cfg.Ready(ctx) }); rec != nil {
			j.log.LogAttrs(ctx, slog.LevelError, "Ready panicked; no sync", slog.String("panic", fmt.Sprint(rec.Value)),
				slog.String("stack", string(rec.Stack)))
			return nil, false
		}
		return s, err == nil && s != nil && ctx.Err() == nil
	}
	return nil, true
}

func (j *Job) once(ctx context.Context, session *discordgo.Session, refused *refusal) (Result, error) {
	if err := clock.CheckTerm(ctx); err != nil { // a fleet leader past its term reads and publishes nothing
		return Result{}, fmt.Errorf("commands: %w", err)
	}
	if j.cfg.Commands != nil {
		session = nil
	}
	return failed(j.syncer.sync(ctx, j.cfg.Commands, session, refused))
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
		attrs := []slog.Attr{slog.String("panic", fmt.Sprint(rec.Value))}
		if j.panicked.CompareAndSwap(false, true) { // the stack once, not once per sync
			attrs = append(attrs, slog.String("stack", string(rec.Stack)))
		}
		j.log.LogAttrs(ctx, slog.LevelError, "OnResult panicked", attrs...)
	}
}

// retryable reports whether a failed sync may succeed unchanged later;
// for Discord, a connection failure, a 5xx or a 429.
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

// retryWait is the wait before retry n, never less than Retry-After.
func retryWait(n int, err error, interval time.Duration) time.Duration {
	wait := clock.Backoff(n, min(5*time.Second, interval), interval)
	var rl *topgg.RateLimitError
	if errors.As(err, &rl) {
		wait = max(wait, rl.RetryAfter)
	}
	return wait
}

// waitReady reports whether session got its READY before ctx was done.
func waitReady(ctx context.Context, session *discordgo.Session) bool {
	if applicationID(session) != "" {
		return true
	}
	ready := make(chan struct{}, 1)
	// State takes READY before the handlers run.
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

// Outcome says what one sync did, fit for a metrics label; its zero value
// is no outcome. Each package's Outcome is one metric's label set.
type Outcome uint8

// Outcomes of a sync, as [Result.Outcome] names them.
const (
	// OutcomePublished: the definitions were sent and the service took them.
	OutcomePublished Outcome = iota + 1
	// OutcomeUnchanged: nothing was sent, the definitions being unchanged.
	OutcomeUnchanged
	// OutcomeSkipped: nothing was sent as the project is not a Discord bot.
	OutcomeSkipped
	// OutcomeFailed: the sync failed.
	OutcomeFailed
)

// String returns the outcome's label value, such as "published", or "unknown".
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
