package shards

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
