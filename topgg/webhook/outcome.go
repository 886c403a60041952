package webhook

// Outcome says how a [Receiver] answered one delivery: a small fixed set, fit
// for a metrics label. Each package's Outcome is one metric's label set.
type Outcome uint8

// Outcomes of a delivery, with the status answered.
const (
	OutcomeAccepted         Outcome = iota + 1 // 2xx: the vote stored, or the event answered
	OutcomeUnauthorized                        // 401: no or a malformed signature (v0: no Authorization)
	OutcomeForbidden                           // 403: no secret signed it, a wrong v0 Authorization, or no v1 secret set
	OutcomeStale                               // 403: a signature timestamp outside the tolerance
	OutcomeMalformed                           // 400: not a valid event, or a vote the store can never take
	OutcomeTooLarge                            // 413: a body over 2 MiB
	OutcomeMethodNotAllowed                    // 405: not a POST
	OutcomeStoreFailed                         // 500: OnVote or OnIntegrationCreate failed; Top.gg retries
	// OutcomePanic: a callback panicked: OnVote or OnIntegrationCreate (500,
	// and Top.gg retries), or OnEvent, after a delivery already observed as
	// OutcomeAccepted (this second observation counts the panic).
	OutcomePanic
)

// String returns the outcome's label value, such as "store_failed", or "unknown".
func (o Outcome) String() string {
	names := [...]string{"unknown", "accepted", "unauthorized", "forbidden", "stale", "bad_request", "too_large", "method_not_allowed", "store_failed", "panic"}
	if int(o) < len(names) {
		return names[o]
	}
	return "unknown"
}
