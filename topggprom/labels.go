package topggprom

import (
	"errors"
	"strings"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// Label values outside a label's set: "unknown" for an API request's route,
// "other" elsewhere.
const (
	other   = "other"
	unknown = "unknown"
)

// enum is one of the jobs' small typed sets: values count from 1, and String
// names each.
type enum interface {
	~uint8
	String() string
}

// labels returns the label values of T, indexed by value: [0] is zero (for
// any value outside the set), then the String of T(1), T(2), ... up to the
// first that names no value.
func labels[T enum](zero string) []string {
	out := []string{zero}
	for i := 1; i < 256; i++ {
		s := T(i).String()
		if !isLabel(s) {
			break
		}
		out = append(out, s)
	}
	return out
}

// isLabel reports whether s names a value ("unknown" and "Origin(4)" do not).
func isLabel(s string) bool {
	return s != "" && s != unknown && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// at returns v's index in a table of n label values, or 0 outside it.
func at[T ~uint8](v T, n int) int {
	if int(v) < n {
		return int(v)
	}
	return 0
}

// method bounds an HTTP method.
func method(m string) string {
	switch m {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
		return m
	}
	return other
}

// documented are the status codes with a label value of their own, those
// Top.gg documents or the client treats apart, three digits a space apart.
const documented = "200 201 204 400 401 403 404 408 413 429 500 502 503 504"

// code returns the label value of a status code: one of documented, "none"
// for no answer, and "other" for any other code.
func code(status int) string {
	if status == 0 {
		return "none"
	}
	for i := 0; i+3 <= len(documented); i += 4 {
		s := documented[i : i+3]
		if int(s[0]-'0')*100+int(s[1]-'0')*10+int(s[2]-'0') == status {
			return s
		}
	}
	return other
}

// routePaths maps each of the client's route patterns to its path label value
// ("GET /bots/:bot_id" to "/bots/:bot_id").
func routePaths() map[string]string {
	out := map[string]string{}
	for _, pattern := range topgg.Routes() {
		_, out[pattern], _ = strings.Cut(pattern, " ")
	}
	return out
}

// requestOutcome is the outcome label of an attempt, by its error's type.
func requestOutcome(err error) string {
	switch e := err.(type) {
	case nil:
		return "ok"
	case *topgg.RateLimitError:
		if e.Local {
			return "blocked" // nothing was sent
		}
		return "rate_limited"
	case *topgg.APIError:
		return "api_error"
	case *topgg.DecodeError:
		return "bad_answer"
	}
	return "transport_error"
}

// webhookOutcomes are the label values of a webhook delivery's outcome.
func webhookOutcomes() []string {
	return []string{"accepted", "unauthorized", "forbidden", "stale", "bad_request", "too_large", "method_not_allowed", "store_failed", "panic"}
}

// webhookOutcome is the outcome label of a delivery, by the receiver's error.
func webhookOutcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, webhook.ErrPanicked):
		return "panic"
	case errors.Is(err, webhook.ErrNoSignature), errors.Is(err, webhook.ErrMalformedSignature):
		return "unauthorized"
	case errors.Is(err, webhook.ErrSignatureMismatch):
		return "forbidden"
	case errors.Is(err, webhook.ErrTimestamp):
		return "stale"
	case errors.Is(err, webhook.ErrMalformedBody):
		return "bad_request"
	case errors.Is(err, webhook.ErrBodyTooLarge):
		return "too_large"
	case errors.Is(err, webhook.ErrMethodNotAllowed):
		return "method_not_allowed"
	}
	return "store_failed" // OnVote's or OnIntegrationCreate's error
}
