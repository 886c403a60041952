package shards

import (
	"errors"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// trimBase returns base with exactly one trailing slash.
func trimBase(base string) string { return strings.TrimRight(base, "/") + "/" }

// apiRewriter sends discordgo's REST calls to another API base. discordgo
// builds every URL from its package-level endpoints; changing those would be
// global state, so the requests are rewritten on their way out instead.
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

// rewrittenError says where a rewritten request really went: http.Client's
// *url.Error around it names the original discord.com URL. It names the host
// only (the base takes no user info, and the path holds no secret).
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
