// Package cmdname holds Discord's character rule for CHAT_INPUT command and
// option names, shared by commands' validation and discordtest's fake.
package cmdname

import (
	"unicode"
	"unicode/utf8"
)

// Valid reports whether name matches Discord's
// ^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$ (unicode flag; the
// apostrophe since 2024). Lower case, where the script has cases, is checked
// apart. It is the regular expression written out: compiling that one (its
// Unicode classes) allocated 1.2 MB at every program's start.
func Valid(name string) bool {
	if n := utf8.RuneCountInString(name); n < 1 || n > 32 {
		return false
	}
	for _, r := range name {
		if r != '-' && r != '_' && r != '\'' && !unicode.In(r, unicode.L, unicode.N, unicode.Devanagari, unicode.Thai) {
			return false
		}
	}
	return true
}
