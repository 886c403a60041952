package webhook

import (
	"context"
	"errors"
)

// Outcome says how a [Receiver] answered one delivery: a small fixed set, fit
// for a metrics label (topggprom labels each value by its String, and any
// value without a name as "other").
type Outcome uint8

// Outcomes of a delivery.
const (
	// OutcomeAccepted: 2xx; the vote was stored (or the event answered).
	OutcomeAccepted Outcome = iota + 1
	// OutcomeUnauthorized: 401; no signature (v0: no Authorization), or a
	// malformed signature header.
	OutcomeUnauthorized
	// OutcomeForbidden: 403; a signature no secret made, a wrong v0
	// Authorization, or a v1 delivery when no v1 secret is set.
	OutcomeForbidden
	// OutcomeStale: 403; a signature timestamp outside the tolerance.
	OutcomeStale
	// OutcomeMalformed: 400; a body that is not a valid event, or a vote the
	// store can never take.
	OutcomeMalformed
	// OutcomeTooLarge: 413; a body over [MaxBodyBytes].
	OutcomeTooLarge
	// OutcomeMethodNotAllowed: 405; not a POST.
	OutcomeMethodNotAllowed
	// OutcomeStoreFailed: 500; OnVote (or OnIntegrationCreate) failed, and
	// Top.gg retries.
	OutcomeStoreFailed
	// OutcomePanic: a callback panicked. For OnVote or OnIntegrationCreate,
	// before the answer, it is the delivery's outcome: 500, and Top.gg
	// retries. For OnEvent, after the answer, the delivery was already
	// observed as OutcomeAccepted, and this second observation counts the
	// panic.
	OutcomePanic
)

// String returns the outcome's label value, such as "store_failed", or
// "unknown". It does not allocate.
func (o Outcome) String() string {
	names := [...]string{"unknown", "accepted", "unauthorized", "forbidden", "stale", "bad_request", "too_large", "method_not_allowed", "store_failed", "panic"}
	if int(o) < len(names) {
		return names[o]
	}
	return "unknown"
}

// outcomeOf classifies a refusal of receive.
func outcomeOf(err error) Outcome {
	switch {
	case errors.Is(err, ErrNoSignature), errors.Is(err, ErrMalformedSignature):
		return OutcomeUnauthorized
	case errors.Is(err, ErrTimestamp):
		return OutcomeStale
	case errors.Is(err, ErrSignatureMismatch):
		return OutcomeForbidden
	case errors.Is(err, ErrBodyTooLarge):
		return OutcomeTooLarge
	default:
		return OutcomeMalformed
	}
}

// observe tells the Observer, if any, of one answer, containing a panic.
func (h *Receiver) observe(ctx context.Context, o Outcome) {
	if h.observer == nil {
		return
	}
	_ = h.contain(ctx, "Observer", func() error { h.observer(o); return nil })
}
