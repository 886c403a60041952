package main

import (
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// apiRewriter sends discordgo's REST calls to another API base (DISCORD_API_URL: a
// REST proxy, or a test server). discordgo builds every URL from its package-level
// endpoints; changing those would be global state, so the requests are rewritten
// on their way out instead.
type apiRewriter struct {
	base string // with a trailing slash
	next http.RoundTripper
}

func newAPIRewriter(base string, next http.RoundTripper) http.RoundTripper {
	base = strings.TrimRight(base, "/") + "/"
	if base == discordgo.EndpointAPI {
		return next
	}
	return &apiRewriter{base: base, next: next}
}

// RoundTrip implements http.RoundTripper without changing req.
func (t *apiRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	rest, ok := strings.CutPrefix(u, discordgo.EndpointAPI)
	if !ok {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	nu, err := out.URL.Parse(t.base + rest)
	if err != nil {
		return nil, err
	}
	out.URL, out.Host = nu, ""
	return t.next.RoundTrip(out)
}
