package webhook

import (
	"fmt"
	"io"
)

// redacted is what every formatting of a secret prints.
const redacted = "[redacted]"

// Secret is a webhook secret (v1 "whs_...", v0 Authorization, or an
// integration's). fmt, slog and encoding/json show "[redacted]"; string(s) is
// the value. Keep it out of unexported struct fields, where fmt calls no method.
type Secret string

// Format prints "[redacted]" under every verb (a Go expression for %#v).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, `webhook.Secret("[redacted]")`)
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// MarshalJSON encodes "[redacted]"; decoding a Secret from JSON reads the
// real value.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
