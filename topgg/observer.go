package topgg

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"
)

// Route is the family of an API route, fit for a metrics label (it never
// carries an id). Its zero value is no route.
type Route uint8

// The routes of the client. Each method of the client calls one of them.
const (
	RouteProject       Route = iota + 1 // GET and PATCH /v1/projects/@me
	RouteAnnouncements                  // POST /v1/projects/@me/announcements
	RouteMetrics                        // PATCH /v1/projects/@me/metrics
	RouteMetricsBatch                   // POST /v1/projects/@me/metrics/batch
	RouteCommands                       // PUT /v1/projects/@me/commands
	RouteVotes                          // GET /v1/projects/@me/votes
	RouteVoteStatus                     // GET /v1/projects/@me/votes/:user_id
	RouteLegacyBots                     // GET /bots and /bots/:bot_id
	RouteLegacyStats                    // GET and POST /bots/:bot_id/stats
	RouteLegacyCheck                    // GET /bots/:bot_id/check
	RouteLegacyVoters                   // GET /bots/:bot_id/votes
)

// String returns the route's label value, such as "metrics_batch", or "unknown".
func (r Route) String() string {
	names := [...]string{"unknown", "project", "announcements", "metrics", "metrics_batch", "commands", "votes", "vote_status", "legacy_bots", "legacy_stats", "legacy_check", "legacy_voters"}
	if int(r) < len(names) {
		return names[r]
	}
	return "unknown"
}

// Outcome says how one attempt of a call ended, fit for a metrics label.
// Each package's Outcome is one metric's label set.
type Outcome uint8

// Outcomes of an attempt, by the type of its Err.
const (
	OutcomeOK             Outcome = iota + 1 // a 2xx (or VoteStatus's 404 "none"), read
	OutcomeAPIError                          // an *APIError other than a rate limit
	OutcomeRateLimited                       // a *RateLimitError from an answer
	OutcomeBlocked                           // a local *RateLimitError: nothing sent
	OutcomeTransportError                    // a *RequestError: no usable answer
	OutcomeBadAnswer                         // a *DecodeError: a 2xx not decoded
)

// String returns the outcome's label value, such as "rate_limited", or "unknown".
func (o Outcome) String() string {
	names := [...]string{"unknown", "ok", "api_error", "rate_limited", "blocked", "transport_error", "bad_answer"}
	if int(o) < len(names) {
		return names[o]
	}
	return "unknown"
}

// Request describes one attempt of a call, as [WithObserver] sees it: Status 0
// when nothing answered; Duration from the send to the end of reading the
// answer; Err the attempt's error as the call would return it.
type Request struct {
	Route    Route
	Method   string
	Attempt  int
	Status   int
	Duration time.Duration
	Outcome  Outcome
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

// observe tells the observers of one attempt.
func (c *Client) observe(r *call, attempt, status int, took time.Duration, err error) {
	req := Request{Route: r.route, Method: r.method, Attempt: attempt, Status: status, Duration: took,
		Outcome: outcomeOf(err), Err: err}
	for _, o := range c.observers {
		c.tell(o, req)
	}
}

// tell calls one observer; its panic must not break the call it watches.
func (c *Client) tell(o func(Request), req Request) {
	defer func() {
		if rec := recover(); rec != nil {
			attrs := []slog.Attr{slog.String("route", req.Route.String()), slog.String("outcome", req.Outcome.String()), slog.Any("panic", rec)}
			if c.panicked.CompareAndSwap(false, true) { // the stack once, not once per request
				attrs = append(attrs, slog.String("stack", string(debug.Stack())))
			}
			c.log.LogAttrs(context.Background(), slog.LevelError, "topgg: Observer panicked", attrs...)
		}
	}()
	o(req)
}

// outcomeOf classifies an attempt's error as send and acquire return it (not
// wrapped), without allocating.
func outcomeOf(err error) Outcome {
	switch e := err.(type) {
	case nil:
		return OutcomeOK
	case *RateLimitError:
		if e.Local {
			return OutcomeBlocked
		}
		return OutcomeRateLimited
	case *APIError:
		return OutcomeAPIError
	case *DecodeError:
		return OutcomeBadAnswer
	}
	return OutcomeTransportError
}

// TokenRefused returns the service's last refusal of the token (an *[APIError]
// matching [ErrUnauthorized]), or nil if a later 2xx of its kind accepted it.
func (c *Client) TokenRefused() error {
	for i := range c.refused {
		if e := c.refused[i].Load(); e != nil {
			return e
		}
	}
	return nil
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
