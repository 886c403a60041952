package webhook

import (
	"fmt"
	"io"
	"log/slog"
)

// redacted is what every formatting of a secret prints.
const redacted = "[redacted]"

// Secret is a webhook secret: a v1 signing secret ("whs_..."), the v0
// Authorization value, or the webhook_secret of an integration.create event.
// It is a string, so a literal or string(s) converts either way, but it never
// prints: fmt under every verb (%v, %+v, %#v, %s, %q, %x), slog and
// encoding/json all show "[redacted]". Convert it with string(s) only where
// the value is needed.
//
// fmt cannot call methods on values it reaches through unexported struct
// fields, so a Secret kept in an unexported field of a struct that is printed
// whole is printed in clear; keep secrets in exported fields or behind a
// pointer.
type Secret string

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns a redacted Go expression, for %#v.
func (Secret) GoString() string { return `webhook.Secret("[redacted]")` }

// Format prints "[redacted]" under every verb (%#v: the GoString form).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// LogValue makes slog print "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON encodes "[redacted]", so that logging an event as JSON leaks
// nothing. Decoding a Secret from JSON reads the real value.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
