package topggtest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// Webhook delivery defaults, as Top.gg documents them: an answer within 5 s,
// and a v1 delivery retried 3 times, about 1, 2 and 4 s apart, on a timeout
// or a 5xx only. v0 deliveries are retried up to 10 times; the fake spaces
// them by the same doubling, capped at one minute.
const (
	DefaultWebhookTimeout = 5 * time.Second
)

// DefaultWebhookRetryDelays are the waits before each retry of a v1 delivery.
func DefaultWebhookRetryDelays() []time.Duration {
	return []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
}

// DefaultLegacyWebhookRetryDelays are the waits before each retry of a v0
// delivery.
func DefaultLegacyWebhookRetryDelays() []time.Duration {
	return []time.Duration{
		time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, time.Minute, time.Minute, time.Minute, time.Minute,
	}
}

// webhookConfig is the delivery part of config.
type webhookConfig struct {
	targets      []webhookTarget
	timeout      time.Duration
	delays       []time.Duration // nil: the defaults of each version
	legacyDelays []time.Duration
}

// webhookTarget is one receiver: v1 when secret is set, else v0 with auth.
type webhookTarget struct {
	url    string
	secret webhook.Secret
	auth   webhook.Secret
}

func (t webhookTarget) version() int {
	if t.secret != "" {
		return 1
	}
	return 0
}

// WithWebhook makes the server deliver v1 webhooks to rawURL, signed with
// secret (a "whs_..." value) like Top.gg signs them: [Server.AddVote] sends a
// vote.create, [Server.SendWebhookTest] a webhook.test. A project can have
// several webhooks: give the option once per receiver, each with its own
// secret. NewServer fails on a secret that is not one "whs_..." value or a
// URL that is not absolute http(s). For a receiver started after the server,
// see [Server.AddWebhook].
func WithWebhook(rawURL, secret string) Option {
	return func(c *config) error {
		t, err := v1Target(rawURL, secret)
		if err != nil {
			return err
		}
		c.webhooks.targets = append(c.webhooks.targets, t)
		return nil
	}
}

// AddWebhook makes the running server deliver v1 webhooks to rawURL too, as
// [WithWebhook] does from the start: for a receiver whose URL is known only
// once it listens (started after the fake, or on port 0). Votes added from
// then on are delivered to it; earlier ones are not. It returns an error,
// and adds nothing, for a URL that is not absolute http(s) or a secret that
// is not one "whs_..." value.
func (s *Server) AddWebhook(rawURL, secret string) error {
	t, err := v1Target(rawURL, secret)
	if err != nil {
		return err
	}
	h := &s.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = append(h.added, t)
	return nil
}

// v1Target checks a v1 receiver as given to WithWebhook or AddWebhook.
func v1Target(rawURL, secret string) (webhookTarget, error) {
	if err := checkWebhookURL(rawURL); err != nil {
		return webhookTarget{}, err
	}
	// One secret, as the receiver would take it (webhook.New refuses the
	// others): a fake signing with a malformed one tests nothing real.
	if list, err := webhook.SplitSecrets(secret); err != nil || len(list) != 1 || string(list[0]) != secret {
		return webhookTarget{}, errors.New("topggtest: a webhook secret is one whs_... value, without white space")
	}
	return webhookTarget{url: rawURL, secret: webhook.Secret(secret)}, nil
}

// webhookTargets returns the receivers: those of the options, then those
// added by AddWebhook.
func (s *Server) webhookTargets() []webhookTarget {
	h := &s.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Concat(s.cfg.webhooks.targets, h.added)
}

// WithLegacyWebhook makes the server deliver v0 (legacy) webhooks to rawURL
// with the Authorization header set to auth: {bot | guild, user, type,
// isWeekend, query}, no signature and no timestamp. NewServer fails on an
// empty auth or a URL that is not absolute http(s).
func WithLegacyWebhook(rawURL, auth string) Option {
	return func(c *config) error {
		if err := checkWebhookURL(rawURL); err != nil {
			return err
		}
		if auth == "" {
			return errors.New("topggtest: WithLegacyWebhook needs an Authorization value")
		}
		c.webhooks.targets = append(c.webhooks.targets, webhookTarget{url: rawURL, auth: webhook.Secret(auth)})
		return nil
	}
}

// WithWebhookRetries sets how long a delivery attempt may take before it
// counts as a timeout (default [DefaultWebhookTimeout]; <= 0 keeps it) and
// the waits before each retry, for v1 and v0 alike (default
// [DefaultWebhookRetryDelays] for v1 and [DefaultLegacyWebhookRetryDelays]
// for v0): len(delays) retries at most. Tests shorten them; the waits are
// real time, so that the schedule can be observed.
func WithWebhookRetries(timeout time.Duration, delays ...time.Duration) Option {
	return func(c *config) error {
		if timeout > 0 {
			c.webhooks.timeout = timeout
		}
		for _, d := range delays {
			if d < 0 {
				return errors.New("topggtest: WithWebhookRetries needs delays >= 0")
			}
		}
		c.webhooks.delays = slices.Clone(delays)
		c.webhooks.legacyDelays = slices.Clone(delays)
		if c.webhooks.delays == nil {
			c.webhooks.delays = []time.Duration{} // no retry, not the default
			c.webhooks.legacyDelays = []time.Duration{}
		}
		return nil
	}
}

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("topggtest: a webhook URL must be an absolute http(s) URL")
	}
	return nil
}

// Delivery is one webhook the server sent, with every attempt and answer.
type Delivery struct {
	// URL is the receiver's URL.
	URL string
	// Version is 1 for a signed delivery, 0 for a legacy one.
	Version int
	// Type is the event type: "vote.create", "webhook.test", ... (v0 votes
	// are "vote.create", v0 tests "webhook.test").
	Type string
	// Body is the body sent (the same on every attempt).
	Body []byte
	// Attempts are the attempts so far, in order.
	Attempts []Attempt
	// Done is true once no more attempts will be made: an answer that is not
	// retried, the retries used up, or the server closed.
	Done bool
}

// Delivered reports whether an attempt got a 2xx answer.
func (d Delivery) Delivered() bool {
	for _, a := range d.Attempts {
		if a.Status >= 200 && a.Status < 300 {
			return true
		}
	}
	return false
}

// Attempt is one POST of a delivery.
type Attempt struct {
	// At is when the attempt was sent (real time, like the retry waits).
	At time.Time
	// Header holds the request headers: the signature (v1, signed anew at
	// each attempt, with the real time even under [WithNow], since the
	// receiver checks it against its own clock) or the Authorization (v0),
	// and X-Topgg-Trace.
	Header http.Header
	// Status is the answer's status, 0 when there was none.
	Status int
	// Body is the answer's body, at most 64 KiB.
	Body []byte
	// Err is why there was no answer: a timeout (wrapping
	// context.DeadlineExceeded) or a connection error. Nil when answered.
	Err error
}

// Deliveries returns a copy of every webhook delivery so far, in the order
// they were made.
func (s *Server) Deliveries() []Delivery {
	h := &s.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Delivery, len(h.deliveries))
	for i, p := range h.deliveries {
		d := *p
		d.Body = slices.Clone(d.Body)
		d.Attempts = slices.Clone(d.Attempts)
		for j, a := range d.Attempts {
			a.Header = a.Header.Clone()
			a.Body = slices.Clone(a.Body)
			d.Attempts[j] = a
		}
		out[i] = d
	}
	return out
}
