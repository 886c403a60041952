package topggtest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// defaultWebhookTimeout and defaultRetryDelays are Top.gg's documented
// delivery: an answer within 5 s, retried on a timeout or a 5xx.
const defaultWebhookTimeout = 5 * time.Second

// defaultRetryDelays returns the waits before each retry of a version.
func defaultRetryDelays(version int) []time.Duration {
	delays := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, time.Minute, time.Minute, time.Minute, time.Minute}
	if version == 1 {
		return delays[:3]
	}
	return delays
}

// webhookTarget is one receiver: its version, and key, the v1 signing secret
// or the v0 Authorization value.
type webhookTarget struct {
	url     string
	version int
	key     webhook.Secret
}

// WithWebhook makes the server deliver v1 webhooks to rawURL, signed with
// secret like Top.gg signs them; give it once per receiver. NewServer fails
// on a secret that is not one "whs_..." value or a URL not absolute http(s).
func WithWebhook(rawURL, secret string) Option { return withTarget(newTarget(rawURL, 1, secret)) }

// AddWebhook is [WithWebhook] for a running server: votes added from then on
// are delivered to rawURL too. It fails, adding nothing, where WithWebhook does.
func (s *Server) AddWebhook(rawURL, secret string) error {
	return s.addTarget(newTarget(rawURL, 1, secret))
}

// WithLegacyWebhook makes the server deliver v0 webhooks to rawURL with
// Authorization auth; NewServer fails where [WithWebhook] does, or on an empty auth.
func WithLegacyWebhook(rawURL, auth string) Option { return withTarget(newTarget(rawURL, 0, auth)) }

// AddLegacyWebhook is [WithLegacyWebhook] for a running server.
func (s *Server) AddLegacyWebhook(rawURL, auth string) error {
	return s.addTarget(newTarget(rawURL, 0, auth))
}

func withTarget(t webhookTarget, err error) Option {
	return func(c *config) error {
		c.targets = append(c.targets, t)
		return err
	}
}

func (s *Server) addTarget(t webhookTarget, err error) error {
	if err != nil {
		return err
	}
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.targets = append(s.hooks.targets, t)
	return nil
}

// newTarget checks a receiver as the options and Add methods take it.
func newTarget(rawURL string, version int, key string) (webhookTarget, error) {
	u, err := url.Parse(rawURL)
	list, splitErr := webhook.SplitSecrets(key)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return webhookTarget{}, errors.New("topggtest: a webhook URL must be an absolute http(s) URL")
	// One secret, as the receiver would take it.
	case version == 1 && (splitErr != nil || len(list) != 1 || string(list[0]) != key):
		return webhookTarget{}, errors.New("topggtest: a webhook secret is one whs_... value, without white space")
	case version == 0 && key == "":
		return webhookTarget{}, errors.New("topggtest: a legacy webhook needs an Authorization value")
	}
	return webhookTarget{url: rawURL, version: version, key: webhook.Secret(key)}, nil
}

// WithWebhookRetries sets a delivery attempt's timeout (default 5 s; <= 0 keeps
// it) and the real-time waits before each retry, v1 and v0 alike.
func WithWebhookRetries(timeout time.Duration, delays ...time.Duration) Option {
	return func(c *config) error {
		if timeout > 0 {
			c.hookTimeout = timeout
		}
		if slices.ContainsFunc(delays, func(d time.Duration) bool { return d < 0 }) {
			return errors.New("topggtest: WithWebhookRetries needs delays >= 0")
		}
		c.hookDelays = append([]time.Duration{}, delays...) // none: no retry, not the default
		return nil
	}
}

// Delivery is one webhook the server sent, with every attempt and answer.
type Delivery struct {
	URL     string // the receiver's
	Version int    // 1 for a signed delivery, 0 for a legacy one
	// Type is the event type, "vote.create" or "webhook.test" (for v0 too).
	Type     string
	Body     []byte    // the same on every attempt
	Attempts []Attempt // so far, in order
	// Done is true once no more attempts will be made.
	Done bool
}

// Delivered reports whether an attempt got a 2xx answer.
func (d Delivery) Delivered() bool {
	return slices.ContainsFunc(d.Attempts, func(a Attempt) bool { return a.Status >= 200 && a.Status < 300 })
}

// Attempt is one POST of a delivery.
type Attempt struct {
	At time.Time // real time, like the retry waits
	// Header holds the request headers: the signature (v1, at real time even
	// under [WithNow]) or Authorization (v0), and X-Topgg-Trace.
	Header http.Header
	Status int    // 0 when there was no answer
	Body   []byte // the answer's, at most 64 KiB
	// Err is why there was no answer: a timeout (context.DeadlineExceeded) or
	// a connection error.
	Err error
}

// Deliveries returns a copy of every webhook delivery so far, in order.
func (s *Server) Deliveries() []Delivery {
	h := s.hooks
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
