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
	"github.com/dblkit/go-topgg/topgg"
)

// DefaultJobInterval is the time between two syncs of a [Job].
const DefaultJobInterval = 15 * time.Minute

// ErrJobSource means a JobConfig sets neither or both of Commands and
// Session.
var ErrJobSource = errors.New("commands: JobConfig: set exactly one of Commands and Session")

// JobConfig configures a [Job]. Exactly one of Commands and Session is set.
type JobConfig struct {
	// Commands are the definitions to publish, as the bot registers them on
	// Discord. A non-nil empty slice clears the listing's commands. They
	// are checked against Discord's rules by NewJob.
	Commands []*discordgo.ApplicationCommand
	// Session, for a bot that gives no list, is one of its sessions: once
	// it has its READY, the application's global commands are read from
	// Discord through it (see [Syncer.SyncFromDiscord]). A bot often
	// registers its commands after READY, so the Job reads them again every
	// Interval; an unchanged list costs one Discord GET and no Top.gg call.
	Session *discordgo.Session
	// Interval is the time between two syncs (default 15 minutes).
	Interval time.Duration
	// OnResult, if not nil, is called after each sync with its outcome:
	// the Result, and the error when it failed (a *topgg.ValidationError,
	// *topgg.APIError, *topgg.RateLimitError, a Discord failure, ...). It
	// runs on the Job's goroutine, must not block for long, and a panic in
	// it is recovered and logged.
	OnResult func(Result, error)
	// Logger receives the failures (default: discard).
	Logger *slog.Logger

	clock clock.Clock // default: the real clock; tests set a fake
}

// Job runs a [Syncer] as a long-running job: it syncs once when Run starts
// (with a Session, once the session has its READY) and again every
// Interval, and reports each outcome to OnResult. A failure worth retrying
// (topgg.Retryable, or a Discord 5xx, 429 or connection failure) is retried
// with backoff, never before the service's Retry-After; a refusal that no
// retry mends (an invalid token, definitions the service refused) is not
// retried: the same definitions are not sent again, only changed ones, at
// the next Interval.
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
// for a nil or zero Syncer, [ErrJobSource] unless exactly one of Commands
// and Session is set, a *topgg.ValidationError for Commands that break
// Discord's rules, and an error for a negative Interval.
func NewJob(s *Syncer, cfg JobConfig) (*Job, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	if (cfg.Commands == nil) == (cfg.Session == nil) {
		return nil, ErrJobSource
	}
	if cfg.Commands != nil {
		if err := Validate(cfg.Commands); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.Interval < 0:
		return nil, errors.New("commands: JobConfig.Interval: must not be negative")
	case cfg.Interval == 0:
		cfg.Interval = DefaultJobInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.clock = clock.Or(cfg.clock)
	return &Job{syncer: s, cfg: cfg, log: cfg.Logger.With("component", "commands")}, nil
}

// Run syncs until ctx is done, then returns nil; nothing it started outlives
// it. It returns [topgg.ErrRunning] while another Run of the Job runs and
// [topgg.ErrNotConfigured] on a zero Job.
func (j *Job) Run(ctx context.Context) error {
	if j == nil || j.syncer == nil {
		return errNotMade
	}
	if !j.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer j.running.Store(false)
	if j.cfg.Session != nil && !waitReady(ctx, j.cfg.Session) {
		return nil
	}
	var refused *refusal
	failures := 0
	for {
		res, err := j.once(ctx, refused)
		if ctx.Err() != nil {
			return nil
		}
		wait := j.cfg.Interval
		switch {
		case err == nil:
			failures, refused = 0, nil
			j.report(ctx, res, nil)
		case errors.Is(err, ErrRefused):
			// Reported when it was refused; these are the same definitions.
			j.log.Debug("commands: definitions unchanged since the service refused them; not sent again")
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

func (j *Job) once(ctx context.Context, refused *refusal) (Result, error) {
	if j.cfg.Session != nil {
		return j.syncer.syncFromDiscord(ctx, j.cfg.Session, refused)
	}
	return j.syncer.sync(ctx, j.cfg.Commands, refused)
}

// report logs a failure and calls OnResult.
func (j *Job) report(ctx context.Context, res Result, err error) {
	if err != nil {
		j.log.LogAttrs(ctx, slog.LevelWarn, "commands: could not publish the slash commands",
			slog.String("error", err.Error()), slog.Bool("retrying", retryable(err)))
	}
	if j.cfg.OnResult == nil {
		return
	}
	if rec := panics.Try(func() { j.cfg.OnResult(res, err) }); rec != nil {
		j.log.LogAttrs(ctx, slog.LevelError, "commands: OnResult panicked", slog.String("panic", fmt.Sprint(rec.Value)))
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

// Outcomes of a sync, as [Outcome] names them: a bounded set, fit for a
// metrics label.
const (
	// OutcomePublished: the definitions were sent and the service took them.
	OutcomePublished = "published"
	// OutcomeUnchanged: nothing was sent, the definitions being those
	// published last.
	OutcomeUnchanged = "unchanged"
	// OutcomeSkipped: nothing was sent for another reason (the project is
	// not a Discord bot).
	OutcomeSkipped = "skipped"
	// OutcomeFailed: the sync failed.
	OutcomeFailed = "failed"
)

// Outcome names the outcome of a sync, as [JobConfig.OnResult] gets it:
// [OutcomePublished], [OutcomeUnchanged], [OutcomeSkipped] or
// [OutcomeFailed]. It does not allocate.
func Outcome(r Result, err error) string {
	switch {
	case err != nil:
		return OutcomeFailed
	case r.Skipped && r.Reason == SkipUnchanged:
		return OutcomeUnchanged
	case r.Skipped:
		return OutcomeSkipped
	}
	return OutcomePublished
}
