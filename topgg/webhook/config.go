package webhook

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// maxBodyBytes is the largest body a Receiver reads. A vote.create is under 1 KiB.
const maxBodyBytes = 2 << 20

// Config configures a [Receiver]: at least one secret (Secrets or LegacyAuth)
// and one callback (OnVote or OnEvent) are required.
type Config struct {
	// Secrets are the v1 signing secrets ("whs_..."); a delivery signed by
	// any is accepted. To rotate, list both here before changing it on Top.gg.
	Secrets []Secret
	// LegacyAuth is the v0 Authorization value; when set, a delivery without a
	// signature header is v0, accepted when its Authorization equals it.
	LegacyAuth Secret

	// OnVote stores a vote before Top.gg gets its answer: nil only once it is
	// durable (204); an error answers 500, retried, one matching
	// [ErrMalformedBody] 400. Called concurrently; nil: votes reach OnEvent only.
	OnVote func(ctx context.Context, v Vote) error
	// OnEvent receives every accepted event once the answer is flushed, with
	// a ctx not cancelled when Top.gg hangs up. Called concurrently.
	OnEvent func(ctx context.Context, e Event)
	// OnIntegrationCreate answers an integration.create; an error or panic
	// answers 500. When nil, it is answered 204 and reaches OnEvent only.
	OnIntegrationCreate func(ctx context.Context, e IntegrationCreate) (IntegrationAnswer, error)
	// Observer, if set, is told of each delivery once answered: nil when
	// accepted, else the refusal (an Err* of this package) or the callback's
	// error; then [ErrPanicked] if OnEvent panics. It must return quickly.
	Observer func(error)
	// Logger receives refusals and callback failures (default: discard).
	Logger *slog.Logger

	clock clock.Clock // default the real one; tests set it through export_test.go
}

// bad is a *topgg.ConfigError; a problem never quotes a secret.
func bad(field, problem string) error { return &topgg.ConfigError{Field: field, Problem: problem} }

// badItem is the error of item i (0-based) of n secrets.
func badItem(i, n int, problem string) error {
	return bad(fmt.Sprintf("secret %d of %d", i+1, n), problem)
}

// check validates the Config and fills in the defaults.
func (c Config) check() (Config, error) {
	if len(c.Secrets) == 0 && c.LegacyAuth == "" {
		return c, bad("webhook.Config.Secrets", "is empty, and so is LegacyAuth: no delivery could be checked")
	}
	for i, s := range c.Secrets {
		if problem := checkV1Secret(s); problem != "" {
			return c, bad(fmt.Sprintf("webhook.Config.Secrets[%d]", i), problem)
		}
	}
	if c.LegacyAuth != "" && !wellFormed(c.LegacyAuth) {
		return c, bad("webhook.Config.LegacyAuth", whiteSpace)
	}
	if c.OnVote == nil && c.OnEvent == nil {
		return c, bad("webhook.Config.OnVote", "is nil, and so is OnEvent")
	}
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.clock = clock.Or(c.clock)
	return c, nil
}

// SplitSecrets splits a comma-separated list of v1 secrets, trimming each. An
// empty or bad item is a *topgg.ConfigError that does not quote the list.
func SplitSecrets(list string) ([]Secret, error) {
	parts := strings.Split(list, ",")
	out := make([]Secret, 0, len(parts))
	for i, p := range parts {
		s := Secret(strings.TrimSpace(p))
		if problem := checkV1Secret(s); problem != "" {
			return nil, badItem(i, len(parts), problem)
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
