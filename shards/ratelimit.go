package shards

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
)

// Bounds of a rate-limit wait and of the retries of one request.
const (
	minRateLimitWait     = 100 * time.Millisecond // so that Retry-After: 0 cannot make it spin
	maxRateLimitWait     = 24 * time.Hour         // caps an absurd Retry-After
	maxRateLimitAttempts = 5                      // sends of one request Discord keeps answering 429
	maxDrain             = 64 << 10               // read of a 429's body, to reuse the connection
	sweepAt              = 1024                   // remembered routes above which expired ones go
)

// The headers by which discordgo's rate limiter decides to sleep, taken off
// every response so that the only waits are this transport's.
var rateLimitHeaders = []string{"X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After", "X-RateLimit-Global"}

// limited sends req once neither its route nor the bot is rate-limited, and
// again after a 429, waiting under req's context.
func (t *transport) limited(req *http.Request) (*http.Response, error) {
	ctx, route := req.Context(), routeKey(req.URL.Path)
	send := req
	for attempt := 1; ; attempt++ {
		// The wait may outlast a fleet leader's clock.
		err := t.wait(ctx, req.Method, route)
		if err == nil {
			err = clock.CheckTerm(ctx)
		}
		if err != nil {
			if send.Body != nil {
				_ = send.Body.Close()
			}
			return nil, err
		}
		resp, err := t.send(send)
		if err != nil {
			return nil, err
		}
		retry, global, limited := t.record(route, resp)
		if !limited {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		_ = resp.Body.Close()
		if send, err = again(req); err != nil || attempt >= maxRateLimitAttempts {
			scope := "route"
			if global {
				scope = "global"
			}
			return nil, fmt.Errorf("shards: %s %s: %w (%s limit, retry after %s) after %d attempts",
				req.Method, route, ErrRateLimited, scope, retry, attempt)
		}
	}
}

// again returns a copy of req to send again, with a fresh body.
func again(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return out, nil
	} else if req.GetBody == nil {
		return nil, errors.New("the request body cannot be sent again")
	}
	var err error
	out.Body, err = req.GetBody()
	return out, err
}

// wait returns when neither the route nor the bot is rate-limited, or with
// the context's error.
func (t *transport) wait(ctx context.Context, method, route string) error {
	for {
		t.mu.Lock()
		until := t.global
		if r := t.routes[route]; r.After(until) {
			until = r
		}
		t.mu.Unlock()
		d := until.Sub(t.clock.Now())
		if d <= 0 {
			return nil
		}
		t.log.Warn("Discord is rate-limiting the bot; waiting", "method", method, "route", route, "wait", d)
		if err := clock.Sleep(ctx, t.clock, d); err != nil {
			return fmt.Errorf("shards: %s %s: waiting out Discord's rate limit: %w", method, route, err)
		}
	}
}

// record remembers the limits a response announces and takes discordgo's
// headers off it; for a 429 it returns the wait and whether it is global.
func (t *transport) record(route string, resp *http.Response) (retry time.Duration, global, limited bool) {
	h := resp.Header
	global, limited = h.Get("X-RateLimit-Global") != "", resp.StatusCode == http.StatusTooManyRequests
	wait := time.Duration(0)
	if limited {
		retry = retryAfter(h)
		wait = retry
	} else if h.Get("X-RateLimit-Remaining") == "0" {
		wait, _ = seconds(h.Get("X-RateLimit-Reset-After"))
	}
	for _, k := range rateLimitHeaders {
		h.Del(k)
	}
	if wait <= 0 {
		return retry, global, limited
	}
	now := t.clock.Now()
	until := now.Add(wait)
	t.mu.Lock()
	defer t.mu.Unlock()
	if global && limited {
		t.global = until
		return retry, global, limited
	}
	if len(t.routes) >= sweepAt {
		maps.DeleteFunc(t.routes, func(_ string, u time.Time) bool { return !u.After(now) })
	}
	if until.After(t.routes[route]) {
		t.routes[route] = until
	}
	return retry, global, limited
}

// retryAfter reads a 429's wait: Retry-After in seconds (Discord's form, with
// fractions), else X-RateLimit-Reset-After, else a second; bounded.
func retryAfter(h http.Header) time.Duration {
	d, ok := seconds(h.Get("Retry-After"))
	if !ok {
		d, ok = seconds(h.Get("X-RateLimit-Reset-After"))
	}
	if !ok {
		return time.Second
	}
	return max(d, minRateLimitWait)
}

// seconds parses a non-negative number of seconds, capped at maxRateLimitWait.
func seconds(s string) (time.Duration, bool) {
	secs, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(secs): // out of range still gives ±Inf
		return 0, false
	case secs >= maxRateLimitWait.Seconds():
		return maxRateLimitWait, true
	case secs < 0:
		return 0, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// routeKey names a route as Discord limits it: the major parameter kept,
// other IDs ":id", tokens ":token", so that the logged key holds no secret.
func routeKey(path string) string {
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs); i++ {
		_, id := discord.ParseID(segs[i])
		switch prev := segs[i-1]; {
		case id && (prev == "channels" || prev == "guilds" || prev == "webhooks"):
		case id:
			segs[i] = ":id"
		case i >= 2 && (segs[i-2] == "webhooks" || segs[i-2] == "interactions"):
			segs[i] = ":token"
		}
	}
	return strings.Join(segs, "/")
}
