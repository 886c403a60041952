package shards

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
)

// transport is the sessions' http.RoundTripper: it ends discordgo Open's
// context-less gateway lookup when the Group stops, waits out Discord's rate
// limits under the request's context (ratelimit.go), sends the API calls to
// the configured base and bounds every answer's body. It never changes the
// caller's request. Safe for concurrent use.
type transport struct {
	shut    context.Context // done when the Group stops
	base    string          // API base with a trailing slash; "": discordgo's own
	maxBody int64
	next    http.RoundTripper
	clock   clock.Clock
	log     *slog.Logger

	mu     sync.Mutex
	global time.Time            // the bot's global limit ends
	routes map[string]time.Time // each route's limit ends
}

func newTransport(c *config, shut context.Context, next http.RoundTripper) *transport {
	base := trimBase(c.apiBase)
	if c.apiBase == "" || base == discordgo.EndpointAPI {
		base = ""
	}
	return &transport{shut: shut, base: base, maxBody: c.maxBody, next: next, clock: c.clock, log: c.logger,
		routes: make(map[string]time.Time)}
}

// trimBase returns base with exactly one trailing slash.
func trimBase(base string) string { return strings.TrimRight(base, "/") + "/" }

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.String() != discordgo.EndpointGateway {
		return t.limited(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.shut, cancel)
	release := func() { stop(); cancel() }
	resp, err := t.limited(req.Clone(ctx))
	if err != nil {
		release()
		return nil, err
	}
	// The body is read after RoundTrip returns: ctx lives until it is closed.
	resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// send sends req once, to the API base, and bounds the answer's body: a
// declared Content-Length over the bound fails at once, without reading.
func (t *transport) send(req *http.Request) (*http.Response, error) {
	out, err := t.rewrite(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil && out != req {
		return nil, &rewrittenError{host: out.URL.Host, err: err}
	}
	if err != nil {
		return nil, err
	}
	tooLarge := fmt.Errorf("shards: %s %s: %w (over %d bytes)", req.Method, routeKey(req.URL.Path), ErrBodyTooLarge, t.maxBody)
	if resp.ContentLength > t.maxBody {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{ReadCloser: http.MaxBytesReader(nil, resp.Body, t.maxBody), err: tooLarge}
	return resp, nil
}

// rewrite returns req, or a copy of it sent to the API base if it is one of
// discordgo's API calls: requests are rewritten, not discordgo's global endpoints.
func (t *transport) rewrite(req *http.Request) (*http.Request, error) {
	rest, ok := strings.CutPrefix(req.URL.String(), discordgo.EndpointAPI)
	if t.base == "" || !ok {
		return req, nil
	}
	out := req.Clone(req.Context())
	nu, err := out.URL.Parse(t.base + rest)
	if err != nil {
		return nil, err
	}
	out.URL, out.Host = nu, ""
	return out, nil
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

// limitedBody is an http.MaxBytesReader whose error over the bound is err.
type limitedBody struct {
	io.ReadCloser
	err error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if _, over := err.(*http.MaxBytesError); over {
		err = b.err
	}
	return n, err
}

// releaseOnClose runs release when the body is closed.
type releaseOnClose struct {
	io.ReadCloser
	release func()
}

func (b *releaseOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}
