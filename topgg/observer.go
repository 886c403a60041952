package topgg

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
)

// Request is one attempt of a call: Route its pattern, one of [Routes] ("GET
// /bots/:bot_id", no ids), Status 0 when nothing answered, Err the attempt's error, unwrapped.
type Request struct {
	Route    string
	Attempt  int
	Status   int
	Duration time.Duration
	Err      error
}

// WithObserver adds o, told of every attempt of every call before any retry
// wait; o must be safe for concurrent use and quick. A panic in it is recovered
// and logged; a nil o is an error.
func WithObserver(o func(Request)) Option {
	return func(c *config) error {
		if o == nil {
			return errors.New("topgg: WithObserver: nil Observer")
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// observe logs one attempt at debug level and tells the observers of it.
func (c *Client) observe(ctx context.Context, r *call, attempt, status int, took time.Duration, err error) {
	if c.log.Enabled(ctx, slog.LevelDebug) {
		// The route, not the path: no ids; an error's text holds no token, and
		// of a body at most the service's own words.
		method, route, _ := strings.Cut(r.route.String(), " ")
		attrs := []slog.Attr{slog.String("method", method), slog.String("route", route), slog.Int("attempt", attempt),
			slog.Int("status", status), slog.Duration("took", took)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "request", attrs...)
	}
	if len(c.observers) == 0 {
		return
	}
	req := Request{Route: r.route.String(), Attempt: attempt, Status: status, Duration: took, Err: err}
	for _, o := range c.observers {
		c.tell(o, req)
	}
}

// tell calls one observer; its panic must not break the call it watches.
func (c *Client) tell(o func(Request), req Request) {
	defer func() {
		if rec := recover(); rec != nil {
			attrs := []slog.Attr{slog.String("route", req.Route), slog.Any("panic", rec)}
			if c.panicked.CompareAndSwap(false, true) { // the stack once, not once per request
				attrs = append(attrs, slog.String("stack", string(debug.Stack())))
			}
			c.log.LogAttrs(context.Background(), slog.LevelError, "topgg: Observer panicked", attrs...)
		}
	}()
	o(req)
}

// TokenRefused returns the service's last refusal of the token (an *[APIError]
// matching [ErrUnauthorized]), or nil if a later 2xx of its kind accepted it.
func (c *Client) TokenRefused() error {
	if e := cmp.Or(c.refused[0].Load(), c.refused[1].Load()); e != nil {
		return e
	}
	return nil // not a nil *APIError
}

// tokenCheckHint says what to check when the service refuses the token.
const tokenCheckHint = "check that the token is the project's current API token, from the project's " +
	"Top.gg dashboard (Integrations & API), given alone; a regenerated token replaces the old one"

// noteIfRefused records an answer that refuses the token, with the client's
// hint on v1; the first of a spell is logged at error level, repeats not.
func (c *Client) noteIfRefused(ctx context.Context, r *call, e *APIError) {
	if !e.unauthorized() {
		return
	}
	if !r.legacy {
		e.Hint = c.hint
	}
	if c.refused[kindIndex(r.legacy)].Swap(e) != nil {
		return
	}
	attrs := []slog.Attr{slog.String("op", r.op()), slog.Int("status", e.StatusCode), slog.String("check", tokenCheckHint)}
	if e.Hint != "" {
		attrs = append(attrs, slog.String("hint", e.Hint))
	}
	c.log.LogAttrs(ctx, slog.LevelError, "Top.gg refused the token; calls fail until it accepts one", attrs...)
}

// noteAccepted ends a spell of refusals of r's kind, if one is on.
func (c *Client) noteAccepted(ctx context.Context, r *call) {
	p := &c.refused[kindIndex(r.legacy)]
	if p.Load() == nil || p.Swap(nil) == nil {
		return
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "Top.gg accepts the token again", slog.String("op", r.op()))
}

func kindIndex(legacy bool) int {
	if legacy {
		return 1
	}
	return 0
}
