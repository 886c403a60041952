package httpx

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words returns s with each whole occurrence of each secret (not inside a
// longer word) replaced by mark: a short user name "u" leaves "connection
// refused" as it is, and "user=u" shows "user=" + mark.
func Words(s, mark string, secrets ...string) string {
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		var b strings.Builder
		from := 0 // s[:from] is in b
		for at := 0; ; {
			i := strings.Index(s[at:], secret)
			if i < 0 {
				break
			}
			i += at
			at = i + len(secret)
			if !glued(s[:i], secret, s[at:]) {
				b.WriteString(s[from:i])
				b.WriteString(mark)
				from = at
			}
		}
		b.WriteString(s[from:])
		s = b.String()
	}
	return s
}

// glued reports whether secret, between before and after, is part of a longer word.
func glued(before, secret, after string) bool {
	l, _ := utf8.DecodeLastRuneInString(before)
	f, _ := utf8.DecodeRuneInString(secret)
	ls, _ := utf8.DecodeLastRuneInString(secret)
	r, _ := utf8.DecodeRuneInString(after)
	return (before != "" && word(l) && word(f)) || (after != "" && word(ls) && word(r))
}

func word(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
