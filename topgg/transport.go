package topgg

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

const (
	maxBody       = 32 << 20       // a successful answer (a v0 search of 500 long bots is the largest)
	maxErrorBody  = 4 << 10        // what an error keeps of a failed answer's body
	maxDrain      = 256 << 10      // what is read of an unread body, for the connection's reuse
	maxRetryAfter = 24 * time.Hour // a Retry-After, so that arithmetic on it cannot overflow
)

// hdrJSON is shared by every request and never modified.
var hdrJSON = []string{"application/json"}

// call describes one API call; do is the only place that sends requests.
type call struct {
	route        route
	id           string // the value of route's one :param, if any (validated: nothing to escape)
	query        string // encoded query, without "?"
	body         any    // encoded as JSON; nil sends no body
	family       string // groups routes that share a rate limit block
	legacy       bool   // v0: a bare token, and the v0 window
	idempotent   bool   // may be sent more than once
	allowEmpty   bool   // accepts an empty 2xx body although out is set
	absentOn404  bool   // makes a 404 the service itself answered a success
	tokenOnly400 bool   // the route's only documented 400 is an invalid token
}

// split returns the call's method and path, with r.id for route's :param.
func (r *call) split() (method, path string) {
	method, path, _ = strings.Cut(r.route.String(), " ")
	if i := strings.IndexByte(path, ':'); i >= 0 {
		end := strings.IndexByte(path[i:], '/')
		if end < 0 {
			end = len(path) - i
		}
		path = path[:i] + r.id + path[i+end:]
	}
	return method, path
}

func (r *call) op() string { m, p := r.split(); return m + " " + p }

// do sends r, retrying as the policy allows, and decodes a 2xx body into out
// (if not nil). It returns the final status (0: no answer), also with an
// error for a 2xx not decoded, and a nil error for an absentOn404 404.
func (c *Client) do(ctx context.Context, r *call, out any) (int, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return 0, fmt.Errorf("topgg: %s: encoding body: %w", r.op(), err)
		}
	}
	_, path := r.split()
	target := c.target + path
	if r.query != "" {
		target += "?" + r.query
	}
	attempts, maxWait := 1, time.Duration(0)
	if r.idempotent && c.retry.MaxAttempts > 1 {
		// A call that may be retried waits out a short block rather than fail.
		attempts, maxWait = c.retry.MaxAttempts, c.retry.MaxRetryAfter
	}
	for attempt := 1; ; attempt++ {
		status, wait, err := c.try(ctx, r, target, payload, attempt, maxWait, out)
		if err == nil {
			return status, nil
		}
		if ctx.Err() != nil {
			return status, ctx.Err()
		}
		if wait < 0 || attempt >= attempts {
			return status, err
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "retrying", slog.String("op", r.op()), slog.Int("attempt", attempt),
			slog.Int("status", status), slog.Duration("wait", wait), slog.String("error", err.Error()))
		if err := clock.Sleep(ctx, c.limits.clk, wait); err != nil {
			return status, err
		}
	}
}

// try clears one attempt with the limits (waiting out up to maxWait of a
// block), sends it, and tells the observers; a limits' refusal is not retried.
func (c *Client) try(ctx context.Context, r *call, target string, payload []byte, attempt int, maxWait time.Duration, out any) (int, time.Duration, error) {
	// Before every send: a block recorded while this call waited stops it too.
	slot, err := c.limits.acquire(ctx, r, maxWait)
	if err != nil {
		if ctx.Err() == nil {
			c.observe(ctx, r, attempt, 0, 0, err) // a local block: nothing was sent
		}
		return 0, -1, err
	}
	start := time.Now()
	status, wait, err := c.send(ctx, r, target, payload, attempt, out)
	c.limits.doneLegacy(slot)
	if err == nil || status != 0 || ctx.Err() == nil {
		// A request cut short by its own context (a stop) is no attempt to count.
		c.observe(ctx, r, attempt, status, time.Since(start), err)
	}
	return status, wait, err
}

// send makes one attempt; on failure it returns the wait before the next, or
// a negative wait when it must not be retried.
func (c *Client) send(ctx context.Context, r *call, target string, payload []byte, attempt int, out any) (int, time.Duration, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	method, _, _ := strings.Cut(r.route.String(), " ")
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return 0, -1, fmt.Errorf("topgg: %s: %w", r.op(), err)
	}
	req.Header["Authorization"] = c.auth()[kindIndex(r.legacy)]
	req.Header["Accept"] = hdrJSON
	req.Header["User-Agent"] = c.userAgent
	if payload != nil {
		req.Header["Content-Type"] = hdrJSON
	}
	// A leader's term is checked last, right before the send.
	if err := clock.CheckTerm(ctx); err != nil {
		return 0, -1, fmt.Errorf("topgg: %s: %w", r.op(), err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// A scrubbed *RequestError (it can quote a malformed answer), keeping
		// only the *url.Error's cause: the URL says nothing new.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		re := &RequestError{Op: r.op(), Attempts: attempt, Err: c.scrub.Err(err)}
		return 0, c.retry.backoff(attempt, re.retryable()), re
	}
	if status := resp.StatusCode; status >= 200 && status < 300 {
		c.noteAccepted(ctx, r)
		return c.success(r, resp, attempt, out)
	}
	return c.failure(ctx, r, resp, attempt)
}

// success reads a 2xx answer and decodes it into out, if not nil; an empty
// body is a *DecodeError unless the call allows it.
func (c *Client) success(r *call, resp *http.Response, attempt int, out any) (int, time.Duration, error) {
	status := resp.StatusCode
	data, err := readAll(resp)
	if err != nil && !errors.Is(err, errBodyTooLarge) {
		return status, c.retry.backoff(attempt, true), &RequestError{Op: r.op(), Attempts: attempt, Err: c.scrub.Err(err)}
	}
	switch {
	case err != nil, out == nil:
	case len(bytes.TrimSpace(data)) == 0:
		if !r.allowEmpty && status != http.StatusNoContent {
			err = errors.New("empty body")
		}
	default:
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return status, -1, &DecodeError{Op: r.op(), Status: status, Body: errorBody(c.scrub, data, false), Err: c.scrub.Err(err)}
	}
	return status, 0, nil
}

// errorBody keeps a copy of the start of a body for an error (maxErrorBody
// bytes), scrubbed of the token; truncated says data was cut short already.
func errorBody(scrub httpx.Scrubber, data []byte, truncated bool) []byte {
	if len(data) == 0 {
		return nil
	}
	n := min(len(data), maxErrorBody)
	b := scrub(data[:n], truncated || len(data) > n)
	return bytes.Clone(b[:min(len(b), maxErrorBody)]) // "[redacted]" may be longer than what it replaced
}

// failure turns an answer that says no into an error, records the block its
// Retry-After asks for (on any status), and says when to try again: after a
// 429, or a retryable answer that blocked its family, a *RateLimitError.
func (c *Client) failure(ctx context.Context, r *call, resp *http.Response, attempt int) (int, time.Duration, error) {
	status := resp.StatusCode
	ra, hinted := c.retryAfter(ctx, r, resp)
	if ra > 0 {
		c.recordBlock(ctx, r, status, ra)
	}
	data, truncated := readError(resp)
	if status == http.StatusNotFound && r.absentOn404 && serviceAnswer(resp.Header.Get("Content-Type"), data) {
		return status, 0, nil
	}
	if !hinted && status == http.StatusTooManyRequests {
		// The service's 429 body also says how long, when the header is missing.
		if ra, _ = parseRetryAfterBody(data); ra > 0 {
			c.recordBlock(ctx, r, status, ra)
		}
	}
	apiErr := newAPIError(r.op(), status, data, truncated, attempt, c.scrub)
	apiErr.tokenOnly400, apiErr.RetryAfter = r.tokenOnly400, ra
	c.noteIfRefused(ctx, r, apiErr)
	if status == http.StatusTooManyRequests || (ra > 0 && apiErr.retryable()) {
		// The next acquire waits out the block; the backoff avoids a tight loop.
		return status, c.retry.backoff(attempt, ra <= c.retry.MaxRetryAfter), &RateLimitError{Op: r.op(), RetryAfter: ra, API: apiErr}
	}
	return status, c.retry.backoff(attempt, apiErr.retryable()), apiErr
}

// retryAfter reads the answer's Retry-After header; one the client cannot use
// is logged, once per client.
func (c *Client) retryAfter(ctx context.Context, r *call, resp *http.Response) (time.Duration, bool) {
	header := resp.Header.Get("Retry-After")
	ra, ok := parseRetryAfterHeader(header, peerNow(resp.Header.Get("Date"), time.Now()))
	if !ok && strings.TrimSpace(header) != "" && !c.oddRetryAfter.Swap(true) {
		// The header is the service's text like a body: it may echo the token.
		n := min(len(header), 64)
		c.log.LogAttrs(ctx, slog.LevelWarn, "ignoring a Retry-After the client cannot use (logged once per client)",
			slog.String("op", r.op()), slog.Int("status", resp.StatusCode), slog.String("retry_after", string(c.scrub([]byte(header[:n]), len(header) > n))),
			slog.Duration("max", maxRetryAfter))
	}
	return ra, ok
}

// recordBlock blocks r's family for d and logs it.
func (c *Client) recordBlock(ctx context.Context, r *call, status int, d time.Duration) {
	c.limits.block(r.family, d)
	c.log.LogAttrs(ctx, slog.LevelWarn, "rate limited", slog.String("op", r.op()), slog.Int("status", status),
		slog.Duration("retry_after", d), slog.String("family", r.family))
}

// serviceAnswer reports whether an error answer comes from the service rather
// than a web server under a wrong base URL.
func serviceAnswer(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "application/problem+json" || mt == "application/json") {
		return true
	}
	// A proxy may change the Content-Type; the body still shows a JSON object.
	body = bytes.TrimSpace(body)
	return len(body) > 0 && body[0] == '{' && json.Valid(body)
}

// get makes the call r and returns its decoded answer.
func get[T any](ctx context.Context, c *Client, r *call) (*T, error) {
	var out T
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// errBodyTooLarge reports a successful answer over maxBody bytes.
var errBodyTooLarge = fmt.Errorf("body larger than %d bytes", maxBody)

// readAll reads a successful answer's body, up to maxBody bytes, and closes it.
func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	if n := resp.ContentLength; n >= 0 && n <= maxBody {
		// One buffer of the announced size (none for a 204); net/http fails a shorter body.
		data := make([]byte, n)
		_, err := io.ReadFull(resp.Body, data)
		return data, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if len(data) > maxBody {
		return data[:maxBody], errBodyTooLarge
	}
	return data, err
}

// readError keeps the start of a failed answer's body, drains a bounded rest
// for the connection's reuse, and closes it.
func readError(resp *http.Response) (data []byte, truncated bool) {
	defer resp.Body.Close()
	data, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	if len(data) > maxErrorBody {
		data, truncated = data[:maxErrorBody], true
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	return data, truncated
}

// newAPIError decodes a v1 problem+json or a v0 error body leniently; every
// string kept is scrubbed of the token.
func newAPIError(op string, status int, data []byte, truncated bool, attempts int, scrub httpx.Scrubber) *APIError {
	e := &APIError{Op: op, StatusCode: status, Attempts: attempts, Body: errorBody(scrub, data, truncated)}
	// Members of another JSON type are ignored, not an error.
	var m struct{ Type, Title, Detail, Error, Message any }
	if json.Unmarshal(data, &m) != nil {
		return e
	}
	str := func(v any) string { s, _ := v.(string); return scrub.Text(s) }
	e.Type, e.Title = str(m.Type), str(m.Title)
	e.Detail = cmp.Or(str(m.Detail), str(m.Error), str(m.Message))
	return e
}

// parseRetryAfterBody reads a 429 body's "retry-after", a number of seconds,
// or the same number quoted, spaces around it allowed (json.Number refuses them).
func parseRetryAfterBody(body []byte) (time.Duration, bool) {
	var b struct {
		RetryAfter json.RawMessage `json:"retry-after"`
	}
	if json.Unmarshal(body, &b) != nil {
		return 0, false
	}
	s := string(b.RetryAfter)
	_ = json.Unmarshal(b.RetryAfter, &s) // a string's text; a number stays as it was
	return parseSeconds(strings.TrimSpace(s))
}

func parseRetryAfterHeader(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if d, ok := parseSeconds(h); ok {
		return d, true
	}
	t, err := http.ParseTime(h)
	if d := t.Sub(now); err == nil && d <= maxRetryAfter { // else a wrong clock or header: treated as missing
		return max(d, 0), true
	}
	return 0, false
}

// peerNow is the time an HTTP-date Retry-After is measured from: the answer's
// own Date, unless further than maxRetryAfter from local.
func peerNow(date string, local time.Time) time.Time {
	t, err := http.ParseTime(strings.TrimSpace(date))
	if err != nil || t.Sub(local).Abs() > maxRetryAfter {
		return local
	}
	return t
}

// parseSeconds reads a decimal number of seconds, clamped to [0,
// maxRetryAfter], refusing "Inf", "NaN", hex floats and underscores.
func parseSeconds(s string) (time.Duration, bool) {
	if s == "" || strings.Trim(s, "0123456789.+-eE") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	switch {
	case f <= 0:
		return 0, true
	case f >= maxRetryAfter.Seconds():
		return maxRetryAfter, true
	}
	return time.Duration(f * float64(time.Second)), true
}
