package webhook

import "errors"

// Errors of a delivery, answered by the [Receiver] with the status given; none
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
	// ErrMethodNotAllowed: not a POST (405).
	ErrMethodNotAllowed = errors.New("webhook: method not allowed, use POST")
	// ErrPanicked: a callback panicked (500 from OnVote or OnIntegrationCreate).
	ErrPanicked = errors.New("webhook: callback panicked")
)
