package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
)

// defaultInterval is the time between two syncs of Run.
const defaultInterval = 15 * time.Minute

// MinInterval is the shortest Config.Interval [New] accepts, to stay within
// Top.gg's limits; it does not apply to a [topgg.Client.Loopback] client.
const MinInterval = time.Minute

// Run syncs at start and every Interval until ctx is done, then returns nil; it
// may run again. Transient failures are retried with backoff (never before
// Retry-After); refused definitions are not sent again until they change. Errors:
// a refused token's (topgg.ErrUnauthorized), [topgg.ErrRunning] while another Run
// runs, a *topgg.ConfigError without Commands, Session or Ready, Ready's.
func (s *Syncer) Run(ctx context.Context) error {
	if s.cfg.Commands == nil && s.cfg.Session == nil && s.cfg.Ready == nil {
		return &topgg.ConfigError{Field: "commands.Config.Session", Problem: "Run needs Commands, Session or Ready"}
	}
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("commands: Syncer.Run: %w", topgg.ErrRunning)
	}
	defer s.running.Store(false)
	session, ok, err := s.session(ctx)
	if !ok {
		return err
	}
	var refused *refusal
	failures := 0
	for {
		res, err := s.once(ctx, session, refused)
		if ctx.Err() != nil {
			return nil
		}
		wait := s.cfg.Interval
		switch {
		case err == nil:
			failures, refused = 0, nil
			s.report(ctx, res, nil)
		case errors.Is(err, topgg.ErrUnauthorized):
			s.report(ctx, res, err)
			return err
		case errors.Is(err, ErrRefused):
			// Reported when it was refused; these are the same definitions.
			s.log.Debug("definitions unchanged since the service refused them; not sent again")
		case retryable(err):
			failures++
			wait = retryWait(failures, err, s.cfg.Interval)
			s.report(ctx, res, err)
		default:
			if res.Hash != "" {
				refused = &refusal{hash: res.Hash, err: err}
			}
			s.report(ctx, res, err)
		}
		if clock.Sleep(ctx, s.cfg.clock, wait) != nil {
			return nil
		}
	}
}

// session waits for the session of Session or Ready (nil without them);
// false when ctx ended first, or with Ready's error (a panic is logged).
func (s *Syncer) session(ctx context.Context) (*discordgo.Session, bool, error) {
	switch {
	case s.cfg.Session != nil:
		return s.cfg.Session, s.waitReady(ctx, s.cfg.Session), nil
	case s.cfg.Ready != nil:
		var session *discordgo.Session
		var err error
		if rec := panics.Try(func() { session, err = s.cfg.Ready(ctx) }); rec != nil {
			s.log.LogAttrs(ctx, slog.LevelError, "Ready panicked; no sync", slog.String("panic", fmt.Sprint(rec.Value)),
				slog.String("stack", string(rec.Stack)))
			return nil, false, nil
		}
		switch {
		case ctx.Err() != nil:
			return nil, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("commands: Config.Ready: %w", err)
		case session == nil:
			return nil, false, fmt.Errorf("commands: Config.Ready: %w (no session, no error)", topgg.ErrNilArgument)
		}
		return session, true, nil
	}
	return nil, true, nil
}

func (s *Syncer) once(ctx context.Context, session *discordgo.Session, refused *refusal) (Result, error) {
	if err := clock.CheckTerm(ctx); err != nil { // a fleet leader past its term reads and publishes nothing
		return Result{}, fmt.Errorf("commands: %w", err)
	}
	if s.cfg.Commands != nil {
		session = nil
	}
	return failed(s.sync(ctx, s.cfg.Commands, session, refused))
}

// report logs a failure and calls OnResult.
func (s *Syncer) report(ctx context.Context, res Result, err error) {
	switch {
	case err == nil:
	case retryable(err):
		s.log.LogAttrs(ctx, slog.LevelWarn, "could not publish the slash commands; retrying",
			slog.String("error", err.Error()))
	case errors.Is(err, errDiscordFetch): // nothing was sent: Run reads again after Interval
		s.log.LogAttrs(ctx, slog.LevelError, "Discord refused the read of the application's commands; reading them again next interval",
			slog.String("error", err.Error()))
	default:
		s.log.LogAttrs(ctx, slog.LevelError, "Top.gg refused the slash commands; not sent again until they change",
			slog.String("error", err.Error()))
	}
	if s.cfg.OnResult == nil {
		return
	}
	if rec := panics.Try(func() { s.cfg.OnResult(ctx, res, err) }); rec != nil {
		attrs := []slog.Attr{slog.String("panic", fmt.Sprint(rec.Value))}
		if s.panicked.CompareAndSwap(false, true) { // the stack once, not once per sync
			attrs = append(attrs, slog.String("stack", string(rec.Stack)))
		}
		s.log.LogAttrs(ctx, slog.LevelError, "OnResult panicked", attrs...)
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

// retryWait is the wait before retry n, never less than Top.gg's Retry-After
// or Discord's retry_after.
func retryWait(n int, err error, interval time.Duration) time.Duration {
	wait := clock.Backoff(n, min(5*time.Second, interval), interval)
	if rl, ok := errors.AsType[*topgg.RateLimitError](err); ok {
		wait = max(wait, rl.RetryAfter)
	}
	if rl, ok := errors.AsType[*discordgo.RateLimitError](err); ok && rl.RateLimit != nil && rl.TooManyRequests != nil {
		wait = max(wait, rl.RetryAfter)
	}
	return wait
}

// waitReady reports whether session got its READY before ctx was done; a
// session still not opened after discord.OpenGrace is warned of, once.
func (s *Syncer) waitReady(ctx context.Context, session *discordgo.Session) bool {
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
	grace := s.cfg.clock.NewTimer(discord.OpenGrace)
	defer grace.Stop()
	for applicationID(session) == "" {
		select {
		case <-ctx.Done():
			return false
		case <-ready:
		case <-grace.C():
			discord.WarnUnopened(ctx, s.log, []*discordgo.Session{session})
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
	if o > OutcomeFailed {
		return "unknown"
	}
	return [...]string{"unknown", "published", "unchanged", "skipped", "failed"}[o]
}

// failed sets the Outcome of a sync that returned an error.
func failed(r Result, err error) (Result, error) {
	if err != nil {
		r.Outcome = OutcomeFailed
	}
	return r, err
}
