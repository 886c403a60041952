package shards

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
)

// TestSeconds: Discord's seconds, with fractions, and nonsense, within bounds.
func TestSeconds(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, "0.5": 500 * time.Millisecond, " 1.25 ": 1250 * time.Millisecond, "0": 0, "-3": 0,
		"1e9": maxRateLimitWait, "+Inf": maxRateLimitWait, "1e400": maxRateLimitWait, "-1e400": 0,
	} {
		got, ok := seconds(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "soon", "NaN", "1s"} {
		_, ok := seconds(in)
		assert.False(t, ok, in)
	}
}

// TestRetryAfter: Retry-After first, then X-RateLimit-Reset-After, then a
// second; never less than the floor.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	assert.Equal(t, time.Second, retryAfter(h))
	h.Set("X-RateLimit-Reset-After", "3.5")
	assert.Equal(t, 3500*time.Millisecond, retryAfter(h))
	h.Set("Retry-After", "7")
	assert.Equal(t, 7*time.Second, retryAfter(h))
	h.Set("Retry-After", "0")
	assert.Equal(t, minRateLimitWait, retryAfter(h))
}

// TestRouteKey: the major parameter stays, other IDs and tokens go.
func TestRouteKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/api/v9/guilds/1/members/2/roles/3":               "/api/v9/guilds/1/members/:id/roles/:id",
		"/api/v9/channels/5/messages/6":                    "/api/v9/channels/5/messages/:id",
		"/api/v9/interactions/7/aW50ZXJhY3Rpb24/callback":  "/api/v9/interactions/:id/:token/callback",
		"/api/v9/webhooks/8/d2ViaG9vaw/messages/@original": "/api/v9/webhooks/8/:token/messages/@original",
		"/api/v9/applications/9/commands":                  "/api/v9/applications/:id/commands",
		"/api/v9/gateway":                                  "/api/v9/gateway",
		"/api/v9/users/@me":                                "/api/v9/users/@me",
	} {
		assert.Equal(t, want, routeKey(in), in)
	}
}

// body is a response body of n bytes.
type body struct{ n, read int }

func (b *body) Read(p []byte) (int, error) {
	if b.read >= b.n {
		return 0, io.EOF
	}
	k := min(len(p), b.n-b.read)
	b.read += k
	return k, nil
}

func (b *body) Close() error { return nil }

// answer is a RoundTripper answering with a body of n bytes, declared or not;
// it keeps the last body.
type answer struct {
	n        int
	declared bool
	last     *body
}

func (a *answer) RoundTrip(r *http.Request) (*http.Response, error) {
	cl := int64(-1)
	if a.declared {
		cl = int64(a.n)
	}
	a.last = &body{n: a.n}
	return &http.Response{StatusCode: http.StatusOK, Body: a.last, ContentLength: cl, Request: r}, nil
}

// TestBodyLimit: a body of the bound is read whole; one byte more fails with
// ErrBodyTooLarge, after reading no more than the bound and a byte, or
// before reading when the length is declared.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 1000
	req, err := http.NewRequest(http.MethodGet, "https://discord.com/api/v9/users/@me", http.NoBody)
	require.NoError(t, err)
	for _, declared := range []bool{false, true} {
		resp, err := testTransport("", limit, &answer{n: limit, declared: declared}).RoundTrip(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Len(t, b, limit)

		long := &answer{n: math.MaxInt32, declared: declared}
		resp, err = testTransport("", limit, long).RoundTrip(req)
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			assert.LessOrEqual(t, len(b), limit)
			assert.LessOrEqual(t, long.last.read, limit+1)
		}
		require.ErrorIs(t, err, ErrBodyTooLarge, "declared=%t", declared)
		assert.Contains(t, err.Error(), "GET /api/v9/users/@me: response body too large (over 1000 bytes)")
	}
}

// TestBodyLimitErrorHoldsNoToken: the route in an ErrBodyTooLarge error, which is
// logged, shows an interaction or webhook token as ":token".
func TestBodyLimitErrorHoldsNoToken(t *testing.T) {
	t.Parallel()
	const token = "aW50ZXJhY3Rpb246c2VjcmV0LXRva2Vu"
	req, err := http.NewRequest(http.MethodPatch, "https://discord.com/api/v9/webhooks/123456789012345678/"+token+"/messages/@original", http.NoBody)
	require.NoError(t, err)
	_, err = testTransport("", 10, &answer{n: 100, declared: true}).RoundTrip(req)
	require.ErrorIs(t, err, ErrBodyTooLarge)
	assert.Contains(t, err.Error(), "/api/v9/webhooks/123456789012345678/:token/messages/@original")
	assert.NotContains(t, err.Error(), token)
}

// TestRateLimitWaitOfAnEndedTermIsNotSent: the rate limiter waits out
// a 429 (or a route's limit before the first send) and then sends, with no
// term check: a fleet leader's Discord write (a voter role, a DM) checked
// before the call goes out after the wait although the term ended during
// it. RoundTrip should call clock.CheckTerm(req.Context()) right before each
// send.
func TestRateLimitWaitOfAnEndedTermIsNotSent(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-RateLimit-Reset-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"You are being rate limited.","retry_after":1,"global":false}`))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	cfg := defaultConfig()
	cfg.clock = clk
	hc := &http.Client{Transport: newTransport(&cfg, context.Background(), http.DefaultTransport)}
	ctx := clock.WithTerm(context.Background(), clock.NewTerm(clk, start.Add(500*time.Millisecond), nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, ts.URL+"/api/v10/guilds/1/members/2/roles/3", nil)
	require.NoError(t, err)
	require.NoError(t, clock.CheckTerm(ctx), "the caller checks its term before the call")
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return hits.Load() == 1 && clk.Timers() > 0 }, 10*time.Second, time.Millisecond, "the 429 was not waited out")
	clk.Advance(2 * time.Second) // past the wait, and past the term
	assert.ErrorIs(t, testkit.Recv(t, done, "the request did not return"), clock.ErrTermOver)
	assert.Equal(t, int32(1), hits.Load(), "the request was sent again after the term's deadline")
}

// testTransport returns a Group's transport to base (discordgo's for ""),
// bounding bodies to maxBody, over next, on the real clock.
func testTransport(base string, maxBody int64, next http.RoundTripper) *transport {
	cfg := defaultConfig()
	cfg.apiBase, cfg.maxBody = base, maxBody
	return newTransport(&cfg, context.Background(), next)
}

// lastRequest is a RoundTripper that keeps the request it was given.
type lastRequest struct{ req *http.Request }

func (l *lastRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	l.req = r
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// TestAPIRewriter: every URL under discordgo.EndpointAPI goes to the
// configured base, path and query kept; anything else is sent untouched; the
// caller's request is never changed.
func TestAPIRewriter(t *testing.T) {
	t.Parallel()
	const base = "http://127.0.0.1:5555/proxy/api/v9"
	for _, tc := range []struct{ in, want string }{
		{discordgo.EndpointAPI + "users/@me", base + "/users/@me"},
		{discordgo.EndpointAPI + "gateway", base + "/gateway"},
		{discordgo.EndpointApplicationGlobalCommands("1100000000000000001") + "?with_localizations=true",
			base + "/applications/1100000000000000001/commands?with_localizations=true"},
		{discordgo.EndpointGuildMemberRole("1", "2", "3"), base + "/guilds/1/members/2/roles/3"},
		// Escaped path segments (a reaction's emoji) stay escaped.
		{discordgo.EndpointMessageReaction("1", "2", "%F0%9F%91%8D", "@me"), base + "/channels/1/messages/2/reactions/%F0%9F%91%8D/@me"},
		// Not the API: sent as it is.
		{"https://cdn.discordapp.com/avatars/1/a.png", "https://cdn.discordapp.com/avatars/1/a.png"},
		{"https://discord.com/api/v10/users/@me", "https://discord.com/api/v10/users/@me"},
		{"https://example.com/api/v9/users/@me", "https://example.com/api/v9/users/@me"},
	} {
		next := &lastRequest{}
		rt := testTransport(base, 1<<20, next) // without a trailing slash: added
		req, err := http.NewRequest(http.MethodPut, tc.in, http.NoBody)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bot x")
		resp, err := rt.RoundTrip(req)
		require.NoError(t, err, tc.in)
		_ = resp.Body.Close()

		require.NotNil(t, next.req, tc.in)
		assert.Equal(t, tc.want, next.req.URL.String(), tc.in)
		assert.Equal(t, tc.in, req.URL.String(), "the caller's request was changed")
		assert.Equal(t, http.MethodPut, next.req.Method)
		assert.Equal(t, "Bot x", next.req.Header.Get("Authorization"))
		if tc.in != tc.want {
			assert.Empty(t, next.req.Host, "Host must follow the new URL")
		}
	}
}

// TestAPIRewriterDefaultBase: with Discord's own base nothing is rewritten,
// not even copied.
func TestAPIRewriterDefaultBase(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "https://discord.com/api/v9", "https://discord.com/api/v9/"} {
		next := &lastRequest{}
		req, err := http.NewRequest(http.MethodGet, discordgo.EndpointAPI+"users/@me", http.NoBody)
		require.NoError(t, err)
		resp, err := testTransport(base, 1<<20, next).RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Same(t, req, next.req, base)
	}
}

// failing is a RoundTripper that fails every request.
type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestAPIRewriterErrorNamesTheHost: http.Client's error names the URL discordgo
// asked for (discord.com); the rewriter's says where the request really went,
// without the token, and keeps the cause for errors.Is and Timeout.
func TestAPIRewriterErrorNamesTheHost(t *testing.T) {
	t.Parallel()
	cause := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	hc := &http.Client{Transport: testTransport("http://127.0.0.1:5555/api/v9", 1<<20, failing{cause})}
	req, err := http.NewRequest(http.MethodGet, discordgo.EndpointGateway, http.NoBody)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot secret-token")
	_, err = hc.Do(req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sent to 127.0.0.1:5555 (the API base)")
	assert.NotContains(t, err.Error(), "secret-token")
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	assert.True(t, ue.Timeout(), "a timeout must still read as one")

	// Not rewritten: not wrapped either.
	hc = &http.Client{Transport: testTransport("http://127.0.0.1:5555/api/v9", 1<<20, failing{errors.New("boom")})}
	_, err = hc.Get("https://cdn.discordapp.com/x.png")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "the API base")
}
