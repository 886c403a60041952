package shards

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// trimBase returns base with exactly one trailing slash.
func trimBase(base string) string { return strings.TrimRight(base, "/") + "/" }

// apiRewriter sends discordgo's REST calls to another API base, rewriting
// requests rather than discordgo's global endpoints.
type apiRewriter struct {
	base string // with a trailing slash
	next http.RoundTripper
}

// newAPIRewriter returns next itself when base is discordgo's own.
func newAPIRewriter(base string, next http.RoundTripper) http.RoundTripper {
	if base == "" || trimBase(base) == discordgo.EndpointAPI {
		return next
	}
	return &apiRewriter{base: trimBase(base), next: next}
}

// RoundTrip implements http.RoundTripper without changing req.
func (t *apiRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	rest, ok := strings.CutPrefix(req.URL.String(), discordgo.EndpointAPI)
	if !ok {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	nu, err := out.URL.Parse(t.base + rest)
	if err != nil {
		return nil, err
	}
	out.URL, out.Host = nu, ""
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, &rewrittenError{host: nu.Host, err: err}
	}
	return resp, nil
}

// rewrittenError names the host a rewritten request really went to, which
// http.Client's *url.Error does not.
type rewrittenError struct {
	host string
	err  error
}

func (e *rewrittenError) Error() string {
	return "sent to " + e.host + " (the API base): " + e.err.Error()
}

func (e *rewrittenError) Unwrap() error { return e.err }

// Timeout keeps *url.Error's Timeout working, which looks only one level down.
func (e *rewrittenError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}

// bodyLimit fails every response body longer than limit.
type bodyLimit struct {
	limit int64
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper. A declared Content-Length over the
// limit fails at once, without reading.
func (t *bodyLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tooLarge := fmt.Errorf("shards: %s %s: %w (over %d bytes)", req.Method, routeKey(req.URL.Path), ErrBodyTooLarge, t.limit)
	if resp.ContentLength > t.limit {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.limit, err: tooLarge}
	return resp, nil
}

// limitedBody reads at most left bytes, then fails with err if more follow.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	err  error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	// One byte more than allowed tells a body of exactly the limit from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
