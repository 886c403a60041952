package topgg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// maxBody bounds a successful answer (a v0 search of 500 bots with long descriptions is the largest).
	maxBody = 32 << 20
	// maxErrorBody bounds what an error keeps of a failed answer's body.
	maxErrorBody = 4 << 10
	// maxDrain bounds how much of an unread body is read to let the connection be reused.
	maxDrain = 256 << 10
	// maxRetryAfter bounds a Retry-After value so that arithmetic on it cannot overflow.
	maxRetryAfter = 24 * time.Hour
)

// call describes one API call; do is the only place that sends requests.
type call struct {
	method string
	path   string // below the base URL, starting with "/"
	query  url.Values
	body   any // encoded as JSON; nil sends no body
	legacy bool
	// idempotent calls may be sent more than once.
	idempotent bool
	// family groups routes that share a rate limit block.
	family string
}

func (r *call) op() string { return r.method + " " + r.path }

// do sends r, retrying as the policy allows, and decodes a 2xx body into out (when out
// is not nil and the body is not empty). It returns the final status.
func (c *Client) do(ctx context.Context, r *call, out any) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if left, until := c.limits.check(r.family); left > 0 {
		return 0, &RateLimitError{Op: r.op(), RetryAfter: left, Until: until, Local: true}
	}
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return 0, fmt.Errorf("topgg: %s: encoding body: %w", r.op(), err)
		}
	}
	u := c.base.JoinPath(r.path)
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	target := u.String()

	attempts := c.retry.MaxAttempts
	if !r.idempotent {
		attempts = 1
	}
	for attempt := 1; ; attempt++ {
		if r.legacy {
			if err := c.limits.waitLegacy(ctx); err != nil {
				return 0, err
			}
		}
		status, wait, err := c.send(ctx, r, target, payload, attempt, out)
		if err == nil {
			return status, nil
		}
		if ctx.Err() != nil {
			return status, ctx.Err()
		}
		if wait < 0 || attempt >= attempts {
			c.finalize(r, err)
			return status, err
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "retrying", slog.String("op", r.op()), slog.Int("attempt", attempt),
			slog.Int("status", status), slog.Duration("wait", wait), slog.String("error", err.Error()))
		if err := sleep(ctx, wait); err != nil {
			return status, err
		}
	}
}

// finalize records what a failed call teaches about the limits.
func (c *Client) finalize(r *call, err error) {
	var rl *RateLimitError
	if errors.As(err, &rl) && !rl.Local && rl.RetryAfter > 0 {
		rl.Until = c.limits.block(r.family, rl.RetryAfter)
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "rate limited",
			slog.String("op", r.op()), slog.Duration("retry_after", rl.RetryAfter))
	}
}

// send makes one attempt. On failure it returns how long to wait before the next
// attempt, or a negative wait when the failure must not be retried.
func (c *Client) send(ctx context.Context, r *call, target string, payload []byte, attempt int, out any) (int, time.Duration, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return 0, -1, fmt.Errorf("topgg: %s: %w", r.op(), err)
	}
	if r.legacy {
		req.Header.Set("Authorization", c.token)
	} else {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := c.http.Do(req)
	if err != nil {
		// The *url.Error holds the URL, which never carries the token; keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, c.retry.backoff(attempt), &RequestError{Op: r.op(), Attempts: attempt, Err: err}
	}
	data, readErr := readBody(resp)
	status := resp.StatusCode

	switch {
	case status >= 200 && status < 300:
		if readErr != nil {
			return status, c.retry.backoff(attempt), &RequestError{Op: r.op(), Attempts: attempt, Err: readErr}
		}
		if out != nil && len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return status, -1, &DecodeError{Op: r.op(), Status: status, Body: cut(data), Err: err}
			}
		}
		return status, 0, nil
	case status == http.StatusTooManyRequests:
		apiErr := newAPIError(r.op(), status, data, attempt)
		ra, _ := retryAfter(resp.Header.Get("Retry-After"), data, time.Now())
		rl := &RateLimitError{Op: r.op(), RetryAfter: ra, API: apiErr}
		if ra > c.retry.MaxRetryAfter {
			return status, -1, rl
		}
		return status, ra, rl
	case status >= 500:
		wait := c.retry.backoff(attempt)
		if ra, ok := retryAfter(resp.Header.Get("Retry-After"), nil, time.Now()); ok {
			if ra > c.retry.MaxRetryAfter {
				wait = -1
			} else {
				wait = max(wait, ra)
			}
		}
		return status, wait, newAPIError(r.op(), status, data, attempt)
	default:
		return status, -1, newAPIError(r.op(), status, data, attempt)
	}
}

// readBody reads at most maxBody bytes, drains a bounded rest so the connection can be
// reused, and closes the body.
func readBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var data []byte
	var err error
	if n := resp.ContentLength; n >= 0 && n <= maxBody {
		data = make([]byte, n)
		_, err = io.ReadFull(resp.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err == nil && len(data) > maxBody {
			err = fmt.Errorf("body larger than %d bytes", maxBody)
			data = data[:maxBody]
		}
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	return data, err
}

func cut(b []byte) []byte {
	if len(b) > maxErrorBody {
		b = b[:maxErrorBody]
	}
	return bytes.Clone(b)
}

// newAPIError decodes a v1 problem+json or a v0 error body leniently: a field of the
// wrong type is ignored, not fatal.
func newAPIError(op string, status int, data []byte, attempts int) *APIError {
	e := &APIError{Op: op, StatusCode: status, Body: cut(data), Attempts: attempts}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return e
	}
	str := func(k string) string {
		var s string
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	e.Type, e.Title, e.Detail = str("type"), str("title"), str("detail")
	for _, k := range []string{"error", "message"} {
		if s := str(k); s != "" {
			e.Message = s
			break
		}
	}
	return e
}

// retryAfter reads the Retry-After header (seconds, possibly fractional, or an HTTP
// date) and falls back to the body key "retry-after" (seconds). The result is clamped
// to [0, maxRetryAfter]; ok is false when neither gives a value.
func retryAfter(header string, body []byte, now time.Time) (time.Duration, bool) {
	if d, ok := parseRetryAfterHeader(header, now); ok {
		return d, true
	}
	if len(body) == 0 {
		return 0, false
	}
	var b struct {
		RetryAfter json.Number `json:"retry-after"`
	}
	if json.Unmarshal(body, &b) != nil || b.RetryAfter == "" {
		return 0, false
	}
	return parseSeconds(string(b.RetryAfter))
}

func parseRetryAfterHeader(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if d, ok := parseSeconds(h); ok {
		return d, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return clampRetry(t.Sub(now)), true
	}
	return 0, false
}

func parseSeconds(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f { // f != f: NaN
		return 0, false
	}
	if f > maxRetryAfter.Seconds() {
		return maxRetryAfter, true
	}
	return clampRetry(time.Duration(f * float64(time.Second))), true
}

func clampRetry(d time.Duration) time.Duration {
	return min(max(d, 0), maxRetryAfter)
}
