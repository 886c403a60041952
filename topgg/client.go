package topgg

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

// defaultBaseURL is the API root of the real service.
const defaultBaseURL = "https://top.gg/api"

const defaultUserAgent = "go-topgg (https://github.com/dblkit/go-topgg)"

// me is the token's project, the only one v1 lets a token reach.
const me = "/v1/projects/@me"

// Client calls the Top.gg API with one project token. Make it with [New] and
// share it: it is safe for concurrent use.
type Client struct {
	panicked atomic.Bool // an Observer panicked once: its stack was logged
	// auth and scrub hold the token in closures, which no formatting prints;
	// auth returns the Authorization values of v1 (Bearer) and v0 (bare), by
	// kindIndex, shared and never modified.
	auth      func() [2][]string
	scrub     httpx.Scrubber
	hint      string // for a refused v1 call; see tokenHint
	base      *url.URL
	target    string // base.String(): request URLs are target + path + "?" + query
	http      *http.Client
	log       *slog.Logger
	retry     RetryPolicy
	userAgent []string

	limits        *limits
	observers     []func(Request)
	refused       [2]atomic.Pointer[APIError] // per kind (v1, v0); see TokenRefused
	oddRetryAfter atomic.Bool                 // an unusable Retry-After was logged once
	kind          atomic.Pointer[projectKind] // learnt from Project(); nil until then
}

// Option configures a Client in [New].
type Option func(*config) error

type config struct {
	baseURL   string
	http      *http.Client
	log       *slog.Logger
	retry     RetryPolicy
	userAgent string
	insecure  bool
	legacyN   int
	legacyPer time.Duration
	observers []func(Request)
}

// WithBaseURL sets the API root (default https://top.gg/api): an absolute https
// URL without user info, query, fragment or /v1. Plain http is refused unless
// the host is a loopback address or [WithInsecureHTTP] is given.
func WithBaseURL(u string) Option {
	return func(c *config) error { c.baseURL = u; return nil }
}

// WithInsecureHTTP allows a plain-http base URL on any host, token in clear text.
func WithInsecureHTTP() Option {
	return func(c *config) error { c.insecure = true; return nil }
}

// WithHTTPClient sends through a copy of hc (never changed) that follows only
// the redirects [ErrUnsafeRedirect] allows, then as hc.CheckRedirect does.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("topgg: WithHTTPClient: nil *http.Client")
		}
		c.http = hc
		return nil
	}
}

// WithLogger sets the logger (default: discard) for rate limits, retries and,
// at debug level, each attempt.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.log = cmp.Or(l, c.log); return nil }
}

// WithRetryPolicy replaces the retry policy (default: 4 attempts, backoff from
// 250 ms to 8 s, a Retry-After waited out up to 5 s).
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *config) error { c.retry = p; return p.validate() }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("topgg: WithUserAgent: line break in user agent")
		}
		c.userAgent = ua
		return nil
	}
}

// New returns a Client for the project that owns token, making no request; a
// malformed token is a *[ValidationError] that never quotes it.
func New(token string, opts ...Option) (*Client, error) {
	token = strings.TrimSpace(token)
	if err := checkToken(token); err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	t.ResponseHeaderTimeout = 30 * time.Second
	cfg := config{
		baseURL:   defaultBaseURL,
		log:       slog.New(slog.DiscardHandler),
		retry:     defaultRetryPolicy(),
		userAgent: defaultUserAgent,
		legacyN:   60,
		legacyPer: time.Minute,
		http:      &http.Client{Transport: t, Timeout: 60 * time.Second},
	}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("topgg: New: option %d: %w (Option)", i, ErrNilArgument)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(cfg.baseURL, cfg.insecure)
	if err != nil {
		return nil, &ValidationError{Field: "base URL", Problem: err.Error(), Rule: "https://host[/path], the API root"}
	}
	hc := *cfg.http // a copy: the caller's is never changed
	scrub := httpx.NewScrubber(token)
	hc.CheckRedirect = safeRedirects(hc.CheckRedirect, scrub)
	creds := [2][]string{{"Bearer " + token}, {token}}
	return &Client{
		auth:      func() [2][]string { return creds },
		scrub:     scrub,
		hint:      tokenHint(token),
		base:      base,
		target:    base.String(),
		http:      &hc,
		log:       cfg.log.With("component", "topgg"),
		retry:     cfg.retry,
		userAgent: []string{cfg.userAgent},
		limits:    newLimits(clock.Real(), cfg.legacyN, cfg.legacyPer),
		observers: cfg.observers,
	}, nil
}

// checkToken refuses a token that could never work; a "Bearer " prefix is
// refused, not stripped, to show the mistake where it is made.
func checkToken(token string) error {
	problem := ""
	switch {
	case token == "":
		problem = "is empty"
	case len(strings.Fields(token)) > 1 && strings.EqualFold(strings.Fields(token)[0], "bearer"):
		problem = `starts with "Bearer ": pass the token alone`
	case strings.IndexFunc(token, unicode.IsSpace) >= 0:
		problem = "contains white space"
	case strings.ContainsFunc(token, func(r rune) bool { return r < 0x20 || r == 0x7f }): // net/http would refuse the header
		problem = "contains a control character"
	default:
		return nil
	}
	return &ValidationError{Field: "token", Problem: problem, Rule: "the project's API token alone (the client adds \"Bearer \" on v1)"}
}

// parseBaseURL checks the API root and refuses the /v1 the client adds itself.
func parseBaseURL(raw string, insecure bool) (*url.URL, error) {
	u, err := httpx.ParseBaseURL(raw, insecure)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(u.Path, "/v1") {
		// Every v1 route would become /v1/v1/...: a 404 with no hint.
		return nil, fmt.Errorf("%q ends in /v1: give the root, e.g. %s; the client adds /v1", httpx.RedactURL(u), defaultBaseURL)
	}
	return u, nil
}

// Loopback reports whether the client's base URL is on this machine (a fake).
func (c *Client) Loopback() bool { return httpx.Loopback(c.base.Hostname()) }

// Format prints the client with its base URL and no token, under every verb.
func (c *Client) Format(f fmt.State, _ rune) {
	_, _ = fmt.Fprintf(f, "topgg.Client{base: %s, token: [redacted]}", httpx.RedactURL(c.base))
}

// Legacy returns the v0 (/bots) interface, sharing the client's transport and limits.
func (c *Client) Legacy() *Legacy { return &Legacy{c: c} }
