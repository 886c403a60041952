// This file: keeps secrets out of what the module shows: a token scrubbed
// from what a service sends back ([Scrubber]), URLs shown without their
// credentials ([RedactURL]), and the [Redacted] that stands in for a secret.

package httpx

import (
	"bytes"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret in whatever is shown: a trace of a token in what a
// service says, a header, a printed secret.
const Redacted = "[redacted]"

// Bounds of what counts as a trace of the token.
const (
	// MinSecretPart is the shortest '.'-separated part of the token that is
	// scrubbed on its own (a service may quote only the signature).
	MinSecretPart = 8
	// MinPartialTail is the shortest start of a secret that is scrubbed at the
	// end of a body cut short, where the rest of the secret was cut off.
	MinPartialTail = 4
)

// Scrubber scrubs a token from bytes a service sent; truncated says b was cut
// short, so that a secret cut at its end is scrubbed too. It returns b itself
// when there is nothing to scrub. A nil Scrubber's methods change nothing.
type Scrubber func(b []byte, truncated bool) []byte

// NewScrubber returns the Scrubber of token: it scrubs the token (and so
// "Bearer <token>"), each of its parts of at least MinSecretPart bytes, and the
// forms these take when a service escapes them in JSON or in a URL.
func NewScrubber(token string) Scrubber {
	secrets := secretForms(token)
	return func(b []byte, truncated bool) []byte {
		out := b
		for _, s := range secrets {
			if bytes.Contains(out, s) {
				out = bytes.ReplaceAll(out, s, []byte(Redacted))
			}
		}
		if truncated {
			out = scrubPartialTail(out, secrets)
		}
		return out
	}
}

// secretForms lists the byte strings to scrub, longest first, so that the whole
// token goes before its parts.
func secretForms(token string) [][]byte {
	raw := []string{token}
	for part := range strings.SplitSeq(token, ".") {
		if len(part) >= MinSecretPart && part != token {
			raw = append(raw, part)
		}
	}
	var forms []string
	for _, s := range raw {
		forms = append(forms, s, url.QueryEscape(s), url.PathEscape(s),
			// JSON encoders differ: PHP escapes '/', .NET escapes '+' and '='.
			strings.ReplaceAll(s, "/", `\/`),
			strings.NewReplacer("+", `\u002B`, "=", `\u003D`, "<", `\u003C`, ">", `\u003E`, "&", `\u0026`).Replace(s),
			strings.NewReplacer("+", `\u002b`, "=", `\u003d`, "<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(s),
		)
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	out := make([][]byte, len(forms))
	for i, f := range forms {
		out[i] = []byte(f)
	}
	return out
}

// scrubPartialTail replaces an end of b that is the start of a secret (at least
// MinPartialTail bytes of it): the rest of that secret was cut off.
func scrubPartialTail(b []byte, secrets [][]byte) []byte {
	for _, s := range secrets {
		for k := min(len(s)-1, len(b)); k >= MinPartialTail; k-- {
			if bytes.HasSuffix(b, s[:k]) {
				return append(b[:len(b)-k:len(b)-k], Redacted...)
			}
		}
	}
	return b
}

// Text scrubs a string.
func (r Scrubber) Text(s string) string {
	if r == nil || s == "" {
		return s
	}
	return string(r([]byte(s), false))
}

// Err returns err unchanged when its message holds no trace of the token, and
// otherwise an error with the scrubbed message only, dropping the original,
// which would still hand the token to errors.As or %#v.
func (r Scrubber) Err(err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if clean := r.Text(msg); clean != msg {
		return errors.New(clean)
	}
	return err
}
