package topgg

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/dblkit/go-topgg/internal/baseurl"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/redact"
)

// DefaultBaseURL is the API root of the real service. v1 lives under {base}/v1, v0 directly under it.
const DefaultBaseURL = "https://top.gg/api"

const defaultUserAgent = "go-topgg (https://github.com/dblkit/go-topgg)"

// Client calls the Top.gg API with one project token. Make it with [New] and share it:
// it is safe for concurrent use by many goroutines. The zero value is not usable.
type Client struct {
	// auth holds the token in a closure, which no formatting can print; so does
	// scrub, which takes it out of whatever the service sends back.
	auth      credentials
	scrub     redact.Scrubber
	hint      string // for a refused v1 call; see tokenHint
	project   projectRef
	base      *url.URL
	target    string // base.String(): request URLs are target + path + "?" + query
	http      *http.Client
	log       *slog.Logger
	retry     RetryPolicy
	userAgent []string
	projectID string

	limits    *limits
	observers []Observer
	// refused holds the last refusal of the token, per kind (v1, v0), until
	// an answer of that kind accepts it; see TokenRefused.
	refused [2]atomic.Pointer[APIError]
	// oddRetryAfter is set once an unusable Retry-After was logged, so that
	// a peer sending them is logged once, not at every answer.
	oddRetryAfter atomic.Bool

	mu   sync.Mutex
	kind projectKind // learnt from Project(); zero until then
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
	clk       clock.Clock
	observers []Observer
}

// WithBaseURL sets the API root (default [DefaultBaseURL]). It must be an absolute https
// URL without user info, query or fragment, and the root, not its /v1 (the client adds
// /v1 to v1 routes); plain http is refused unless the host is a loopback address (a local
// fake such as topggtest) or [WithInsecureHTTP] is given. [New] reports a URL it refuses.
func WithBaseURL(u string) Option {
	return func(c *config) error { c.baseURL = u; return nil }
}

// WithInsecureHTTP allows a plain-http base URL on any host. Tokens then travel in clear text.
func WithInsecureHTTP() Option {
	return func(c *config) error { c.insecure = true; return nil }
}

// WithHTTPClient makes the client send through a copy of hc. hc itself is never
// changed. The copy follows a redirect only to the base URL's scheme and host (an
// upgrade to https is allowed), and then as hc.CheckRedirect allows: a redirect
// to plain http or to another host fails with [ErrUnsafeRedirect] before the token
// could follow it.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("topgg: WithHTTPClient: nil *http.Client")
		}
		c.http = hc
		return nil
	}
}

// WithLogger sets the logger for retries, waits and rate limits (default: discard).
// The token is never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l != nil {
			c.log = l
		}
		return nil
	}
}

// WithRetryPolicy replaces the retry policy (default [DefaultRetryPolicy]).
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *config) error {
		if err := p.validate(); err != nil {
			return err
		}
		c.retry = p
		return nil
	}
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

// WithLegacyLimit sets the client-side limit of v0 calls: at most n in any window of
// length per (default 60 per minute, the service's limit; n = 0 turns it off). A v0
// call over the limit waits, honouring its context, rather than failing.
func WithLegacyLimit(n int, per time.Duration) Option {
	return func(c *config) error {
		if n < 0 || per < 0 {
			return errors.New("topgg: WithLegacyLimit: negative limit")
		}
		c.legacyN, c.legacyPer = n, per
		return nil
	}
}

// New returns a Client for the project that owns token. It makes no request.
//
// The token is given alone: New refuses one that starts with "Bearer " (the
// client adds that prefix on v1 and must send the token bare on v0), and one with
// white space or control characters inside. None of its errors quotes the token.
func New(token string, opts ...Option) (*Client, error) {
	token = strings.TrimSpace(token)
	if err := checkToken(token); err != nil {
		return nil, err
	}
	cfg := config{
		baseURL:   DefaultBaseURL,
		log:       slog.New(slog.DiscardHandler),
		retry:     DefaultRetryPolicy(),
		userAgent: defaultUserAgent,
		legacyN:   60,
		legacyPer: time.Minute,
		clk:       clock.Real(),
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(cfg.baseURL, cfg.insecure)
	if err != nil {
		return nil, err
	}
	hc := defaultHTTPClient()
	if cfg.http != nil {
		cp := *cfg.http
		hc = &cp
	}
	scrub := redact.NewScrubber(token)
	hc.CheckRedirect = safeRedirects(hc.CheckRedirect, scrub)
	c := &Client{
		auth:      newCredentials(token),
		scrub:     scrub,
		hint:      tokenHint(token),
		project:   projectMe,
		base:      base,
		target:    base.String(),
		http:      hc,
		log:       cfg.log.With("component", "topgg"),
		retry:     cfg.retry,
		userAgent: []string{cfg.userAgent},
		projectID: projectIDFromToken(token),
		limits:    newLimits(cfg.clk, cfg.legacyN, cfg.legacyPer),
		observers: cfg.observers,
	}
	return c, nil
}

// checkToken refuses a token that could never work; its errors never quote it.
//
// A "Bearer " prefix is refused rather than stripped: it is a header value pasted
// where the token belongs, and saying so at startup shows the mistake where it is
// made (the same value may feed other tools), while a silent strip would also
// accept any other scheme's prefix as part of a token.
func checkToken(token string) error {
	switch {
	case token == "":
		return errors.New("topgg: New: empty token")
	case hasBearerPrefix(token):
		return errors.New(`topgg: New: the token starts with "Bearer ": pass the token alone (the client sends "Bearer <token>" on v1 and the bare token on v0)`)
	case strings.IndexFunc(token, unicode.IsSpace) >= 0:
		return errors.New("topgg: New: token contains white space")
	}
	for i := 0; i < len(token); i++ {
		// A control byte would make net/http refuse the header on every call;
		// say so once, here, without quoting the token.
		if b := token[i]; b < 0x20 || b == 0x7f {
			return errors.New("topgg: New: token contains a control character")
		}
	}
	return nil
}

// parseBaseURL checks the API root by the rules of every base URL a token is
// sent to (internal/baseurl), and refuses the /v1 that the client adds itself.
// Its errors never show a URL's user info or query.
func parseBaseURL(raw string, insecure bool) (*url.URL, error) {
	u, err := baseurl.Parse(raw, insecure)
	if err != nil {
		return nil, fmt.Errorf("topgg: base URL %w", err)
	}
	if strings.HasSuffix(u.Path, "/v1") {
		// Every v1 route would become /v1/v1/...: a 404 with no hint.
		return nil, fmt.Errorf("topgg: base URL %q: give the root, e.g. %s; the client adds /v1", redact.URL(u), DefaultBaseURL)
	}
	return u, nil
}

func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

// Loopback reports whether the client's base URL is on this machine (localhost or a
// loopback address): a fake such as topggtest, never the real service. The jobs'
// interval floors (autopost.MinInterval, voterewards.MinInterval), which keep a
// bot within the service's limits, do not apply to such a client, so that tests
// and demos may run with short intervals; nothing a user sets by accident lifts them.
func (c *Client) Loopback() bool { return baseurl.Loopback(c.base.Hostname()) }

// ProjectID returns the project id carried in the token's informal payload, or "" when
// the token carries none. It is a hint: the authoritative id comes from [Client.Project].
func (c *Client) ProjectID() string { return c.projectID }

// String describes the client without its token.
func (c *Client) String() string {
	return fmt.Sprintf("topgg.Client{base: %s, token: [redacted]}", redact.URL(c.base))
}

// GoString describes the client without its token, for %#v.
func (c *Client) GoString() string { return c.String() }

// Format prints the client without its token under every verb (%v, %+v, %#v, %s, %q).
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// Legacy returns the v0 (/bots) interface of this client. It shares the client's
// transport, retries and limits; v0 calls authenticate with the bare token.
func (c *Client) Legacy() *Legacy { return &Legacy{c: c} }

// credentials returns the ready-made Authorization header value of v1 (Bearer) or
// v0 (bare). The token lives only inside this closure: fmt prints a func as an
// address, even when it reaches the field through reflection (as %s on a Client
// value does), where a string or a pointer to one would be printed in full. The
// slices are shared by every request and never modified (a RoundTripper must not
// modify its request), which saves building them per call.
type credentials func(legacy bool) []string

func newCredentials(token string) credentials {
	bearer, bare := []string{"Bearer " + token}, []string{token}
	return func(legacy bool) []string {
		if legacy {
			return bare
		}
		return bearer
	}
}
