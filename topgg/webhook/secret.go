package webhook

import (
	"fmt"
	"io"
)

// redacted is what every formatting of a secret prints.
const redacted = "[redacted]"

// Secret is a webhook secret: a v1 signing secret ("whs_..."), the v0
// Authorization value, or the webhook_secret of an integration.create event.
// It is a string, so a literal or string(s) converts either way, but it never
// prints: fmt under every verb, slog and encoding/json all show "[redacted]".
//
// fmt cannot call methods on values it reaches through unexported struct
// fields, so a Secret kept in an unexported field of a struct that is printed
// whole is printed in clear; keep secrets in exported fields or behind a
// pointer.
type Secret string

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// Format prints "[redacted]" under every verb (and a Go expression of it
// for %#v), which also covers slog's text output.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, `webhook.Secret("[redacted]")`)
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// MarshalJSON encodes "[redacted]", so that logging an event as JSON leaks
// nothing (slog's JSON output included). Decoding a Secret from JSON reads
// the real value.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
