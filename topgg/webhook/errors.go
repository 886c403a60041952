package webhook

import "errors"

// Errors of a delivery, for errors.Is. The [Receiver] answers each with the
// status given; [Verify], [Decode] and [DecodeLegacy] return them wrapped.
// None of them quotes a secret, a signature or a body.
var (
	// ErrNoSignature: a v1 delivery without an x-topgg-signature header, or a
	// v0 delivery without an Authorization header (401).
	ErrNoSignature = errors.New("webhook: no signature")
	// ErrMalformedSignature: an x-topgg-signature header that is not
	// "t=<unix seconds>,v1=<64 hex digits>" (401).
	ErrMalformedSignature = errors.New("webhook: malformed signature header")
	// ErrSignatureMismatch: no secret of the set signed this body, or the v0
	// Authorization value is not the configured one (403).
	ErrSignatureMismatch = errors.New("webhook: signature does not match")
	// ErrTimestamp: the signature's timestamp is further from now than the
	// tolerance, in either direction (403).
	ErrTimestamp = errors.New("webhook: signature timestamp outside the tolerance")
	// ErrMalformedBody: a body that is not JSON, or an event of a known type
	// that lacks a required member (400).
	ErrMalformedBody = errors.New("webhook: malformed body")
	// ErrBodyTooLarge: a body over 2 MiB (413).
	ErrBodyTooLarge = errors.New("webhook: body too large")
)

// Errors of [New].
var (
	// ErrNoSecret: the Config has neither a v1 secret nor a v0 LegacyAuth.
	ErrNoSecret = errors.New("webhook: no secret configured (Config.Secrets or Config.LegacyAuth)")
	// ErrMalformedSecret: a secret is empty or has white space or control
	// characters around or inside it, or a v1 secret does not start with
	// "whs_". The error names the secret's place, never
	// its value.
	ErrMalformedSecret = errors.New("webhook: malformed secret")
	// ErrNoCallback: the Config has neither OnVote nor OnEvent, so a delivery
	// would reach nobody.
	ErrNoCallback = errors.New("webhook: no callback configured (Config.OnVote or Config.OnEvent)")
)
