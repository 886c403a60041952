package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// chatInputNameRE is the regular expression validChatInputName writes out.
var chatInputNameRE = regexp.MustCompile(`^[-_'\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

func TestValidChatInputNameMatchesTheRegexp(t *testing.T) {
	cases := []string{"", "vote", "a", "Vote", "v-o_t'e", "voter name", "vote!", "बट", "ไทย", "é", "٣", "x\xff",
		"\u0903", "\u0E31", "\u00B2", "😀", strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("é", 32), strings.Repeat("é", 33)}
	for _, c := range cases {
		assert.Equal(t, chatInputNameRE.MatchString(c), validChatInputName(c), "%q", c)
	}
}

func FuzzValidChatInputName(f *testing.F) {
	for _, s := range []string{"vote", "बट", "x\xff", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assert.Equal(t, chatInputNameRE.MatchString(s), validChatInputName(s), "%q", s)
	})
}
