package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// maxBodyBytes is the largest body a Receiver reads. A vote.create is under 1 KiB.
const maxBodyBytes = 2 << 20

// Config configures a [Receiver]: at least one secret (Secrets or LegacyAuth)
// and one callback (OnVote or OnEvent) are required. It prints without its
// secrets.
type Config struct {
	// Secrets are the v1 signing secrets ("whs_..."); a delivery signed by
	// any is accepted. To rotate, list both here before changing it on Top.gg.
	Secrets []Secret
	// LegacyAuth is the v0 Authorization value; when set, a delivery without a
	// signature header is v0, accepted when its Authorization equals it.
	LegacyAuth Secret

	// OnVote stores a vote before Top.gg gets its answer: return nil only once
	// it is durably stored (204, never sent again). An error or panic answers
	// 500, which Top.gg retries; one matching [ErrMalformedBody], 400, which it
	// does not. ctx is the request's. It may be called concurrently; when nil,
	// votes are answered 204 and reach OnEvent only.
	OnVote func(ctx context.Context, v Vote) error
	// OnEvent receives every accepted event once the answer is flushed, before
	// ServeHTTP returns; ctx is not cancelled when Top.gg hangs up. It may be
	// called concurrently; a panic in it is observed as [OutcomePanic].
	OnEvent func(ctx context.Context, e Event)
	// OnIntegrationCreate answers an integration.create; an error or panic
	// answers 500. When nil, it is answered 204 and reaches OnEvent only.
	OnIntegrationCreate func(ctx context.Context, e IntegrationCreate) (IntegrationAnswer, error)

	// Tolerance is how far a v1 signature's timestamp may be from now, in
	// either direction (default 5 minutes).
	Tolerance time.Duration
	// Observer, if set, is told each delivery's outcome once answered, and
	// [OutcomePanic] of an OnEvent that panicked; it must return quickly.
	Observer func(Outcome)
	// Logger receives refusals and callback failures (default: discard).
	Logger *slog.Logger

	clock clock.Clock // default the real one; tests set it through export_test.go
}

// Format prints the Config without its secrets under every verb.
func (c Config) Format(f fmt.State, _ rune) {
	_, _ = fmt.Fprintf(f, "webhook.Config{Secrets: %d [redacted], LegacyAuth: %s, OnVote: %t, OnEvent: %t, OnIntegrationCreate: %t, Tolerance: %s}",
		len(c.Secrets), setOrNot(c.LegacyAuth != ""), c.OnVote != nil, c.OnEvent != nil, c.OnIntegrationCreate != nil, c.Tolerance)
}

// LogValue makes slog print the Config without its secrets.
func (c Config) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(c)) }

func setOrNot(set bool) string {
	if set {
		return redacted
	}
	return "unset"
}

// check validates the Config and fills in the defaults.
func (c Config) check() (Config, error) {
	if len(c.Secrets) == 0 && c.LegacyAuth == "" {
		return c, ErrNoSecret
	}
	for i, s := range c.Secrets {
		if problem := checkV1Secret(s); problem != "" {
			return c, fmt.Errorf("%w: Config.Secrets[%d] %s", ErrMalformedSecret, i, problem)
		}
	}
	if c.LegacyAuth != "" && !wellFormed(c.LegacyAuth) {
		return c, fmt.Errorf("%w: Config.LegacyAuth %s", ErrMalformedSecret, whiteSpace)
	}
	if c.OnVote == nil && c.OnEvent == nil {
		return c, ErrNoCallback
	}
	if c.Tolerance < 0 {
		return c, errors.New("webhook: Config.Tolerance is negative")
	}
	if c.Tolerance == 0 {
		c.Tolerance = defaultTolerance
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.clock = clock.Or(c.clock)
	return c, nil
}

// SplitSecrets splits a comma-separated list of v1 secrets, trimming each. An
// empty or bad item is an error wrapping [ErrMalformedSecret] that does not
// quote the list.
func SplitSecrets(list string) ([]Secret, error) {
	parts := strings.Split(list, ",")
	out := make([]Secret, 0, len(parts))
	for i, p := range parts {
		s := Secret(strings.TrimSpace(p))
		if problem := checkV1Secret(s); problem != "" {
			return nil, fmt.Errorf("%w: item %d of %d %s", ErrMalformedSecret, i+1, len(parts), problem)
		}
		out = append(out, s)
	}
	return out, nil
}

// v1SecretPrefix starts every v1 signing secret.
const v1SecretPrefix = "whs_"

// whiteSpace is the problem of a secret wellFormed refuses.
const whiteSpace = "is empty or holds white space or a control character (a trailing newline?)"

// checkV1Secret says what is wrong with a v1 secret, or "", never quoting it.
func checkV1Secret(s Secret) string {
	switch {
	case !wellFormed(s):
		return whiteSpace
	case !strings.HasPrefix(string(s), v1SecretPrefix) || len(s) == len(v1SecretPrefix):
		return "does not start with " + v1SecretPrefix + " followed by the secret (copy it whole from the project's webhook settings on Top.gg; a v0 secret goes in LegacyAuth)"
	}
	return ""
}

// wellFormed refuses an empty secret and one with white space or control bytes.
func wellFormed(s Secret) bool {
	return s != "" && !strings.ContainsFunc(string(s), func(r rune) bool { return r <= ' ' || r == 0x7f })
}
