package webhook

import (
	"fmt"
	"io"
)

// redacted is what every formatting of a secret prints.
const redacted = "[redacted]"

// Secret is a webhook secret: a v1 signing secret ("whs_..."), the v0
// Authorization value, or an integration's webhook_secret. It never prints:
// fmt, slog and encoding/json all show "[redacted]"; string(s) is the value.
// fmt calls no method of a value in an unexported struct field, so keep
// secrets in exported fields or behind a pointer.
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
