package webhook

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
	// OutcomeTooLarge: 413; a body over 2 MiB.
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
