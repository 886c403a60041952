package cmdname

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidMatchesTheRegexp checks Valid against the regular expression it
// replaces.
func TestValidMatchesTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[-_'\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)
	cases := []string{"", "vote", "a", "Vote", "v-o_t'e", "voter name", "vote!", "बट", "ไทย", "é", "٣", "x\xff",
		"\u0903", "\u0E31", "\u00B2", "😀", strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("é", 32), strings.Repeat("é", 33)}
	for _, c := range cases {
		if got, want := Valid(c), re.MatchString(c); got != want {
			t.Errorf("Valid(%q) = %v, the regexp says %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	re := regexp.MustCompile(`^[-_'\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)
	for _, s := range []string{"vote", "बट", "x\xff", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), re.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
