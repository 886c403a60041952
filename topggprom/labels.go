package topggprom

import (
	"slices"
	"strconv"
)

// other is the label value of anything outside a label's fixed set.
const other = "other"

// voteSources are voterewards.Origin's String values.
func voteSources() []string { return []string{"history", "webhook", "webhook-v0"} }

// autopostOutcomes are autopost.Result.Outcome's values.
func autopostOutcomes() []string { return []string{"posted", "unchanged", "incomplete", "failed"} }

// commandOutcomes are commands.Outcome's values.
func commandOutcomes() []string { return []string{"published", "unchanged", "skipped", "failed"} }

// Webhook outcomes: webhook.Outcome's String values.
const (
	WebhookAccepted         = "accepted"           // 2xx: the vote was stored (or the test event answered)
	WebhookUnauthorized     = "unauthorized"       // a missing or malformed signature header (v0: no Authorization)
	WebhookForbidden        = "forbidden"          // a signature no secret made, or a wrong v0 Authorization
	WebhookStale            = "stale"              // a signature timestamp too old or too new
	WebhookBadRequest       = "bad_request"        // a body that could not be decoded
	WebhookTooLarge         = "too_large"          // a body over the limit
	WebhookMethodNotAllowed = "method_not_allowed" // not a POST
	WebhookStoreFailed      = "store_failed"       // the vote could not be stored: 5xx, Top.gg retries
)

func webhookOutcomes() []string {
	return []string{WebhookAccepted, WebhookUnauthorized, WebhookForbidden, WebhookStale, WebhookBadRequest,
		WebhookTooLarge, WebhookMethodNotAllowed, WebhookStoreFailed}
}

// index returns v's index in set, or len(set) (the "other" slot).
func index(v string, set []string) int {
	if i := slices.Index(set, v); i >= 0 {
		return i
	}
	return len(set)
}

// withOther returns set followed by "other".
func withOther(set []string) []string { return append(slices.Clone(set), other) }

// method bounds an HTTP method.
func method(m string) string {
	switch m {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
		return m
	}
	return other
}

// statusCodes holds the label value of every status code from 100 to 599,
// made once per Metrics so that a request costs no conversion.
type statusCodes [500]string

func newStatusCodes() *statusCodes {
	var s statusCodes
	for i := range s {
		s[i] = strconv.Itoa(i + 100)
	}
	return &s
}

// code returns the label value of a status: "none" for no answer.
func (s *statusCodes) code(status int) string {
	switch {
	case status == 0:
		return "none"
	case status < 100 || status > 599:
		return other
	}
	return s[status-100]
}
