package webhook

import "errors"

// Errors of a delivery, for errors.Is: the [Receiver] answers each with the
// status given; [Verify] and [Decode] return them wrapped. None of them
// quotes a secret, a signature or a body.
var (
	// ErrNoSignature: no x-topgg-signature header (v0: no Authorization) (401).
	ErrNoSignature = errors.New("webhook: no signature")
	// ErrMalformedSignature: a signature header not "t=<unix seconds>,v1=<64 hex digits>" (401).
	ErrMalformedSignature = errors.New("webhook: malformed signature header")
	// ErrSignatureMismatch: no secret of the set signed this body, or a wrong v0 Authorization (403).
	ErrSignatureMismatch = errors.New("webhook: signature does not match")
	// ErrTimestamp: the signature's timestamp is outside the tolerance (403).
	ErrTimestamp = errors.New("webhook: signature timestamp outside the tolerance")
	// ErrMalformedBody: not JSON, or a known event lacking a required member (400).
	ErrMalformedBody = errors.New("webhook: malformed body")
	// ErrBodyTooLarge: a body over 2 MiB (413).
	ErrBodyTooLarge = errors.New("webhook: body too large")
)

// Errors of [New].
var (
	// ErrNoSecret: the Config has neither a v1 secret nor a v0 LegacyAuth.
	ErrNoSecret = errors.New("webhook: no secret configured (Config.Secrets or Config.LegacyAuth)")
	// ErrMalformedSecret: a secret is empty or holds white space or control
	// characters, or a v1 secret does not start with "whs_". The error names
	// the secret's place, never its value.
	ErrMalformedSecret = errors.New("webhook: malformed secret")
	// ErrNoCallback: the Config has neither OnVote nor OnEvent.
	ErrNoCallback = errors.New("webhook: no callback configured (Config.OnVote or Config.OnEvent)")
)
