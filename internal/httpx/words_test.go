package httpx

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, secret, want string }{
		{"failed to connect to `user=u database=db`: connection refused", "u", "failed to connect to `user=# database=db`: connection refused"},
		{"failed to connect: user ed", "ed", "failed to connect: user #"},
		{`auth failed for "p@ss!" (p@ss!x)`, "p@ss!", `auth failed for "#" (#x)`},
		{"hunter2hunter2 hunter2", "hunter2", "hunter2hunter2 #"},
		{"é", "é", "#"},
		{"", "x", ""},
	} {
		assert.Equal(t, tc.want, Words(tc.text, "#", tc.secret), tc.text)
	}
	assert.Equal(t, "a b", Words("a b", "#", ""), "an empty secret changes nothing")
}

// FuzzWords: what Words leaves of a UTF-8 text holds the secret only inside
// longer words, and a text without the secret is returned as it was.
func FuzzWords(f *testing.F) {
	f.Add("connection refused by u", "u")
	f.Add("user=ed: failed", "ed")
	f.Fuzz(func(t *testing.T, text, secret string) {
		if secret == "" || strings.Contains(secret, "\x00") || !utf8.ValidString(text) || !utf8.ValidString(secret) {
			return
		}
		out := Words(text, "\x00", secret)
		if !strings.Contains(text, secret) && out != text {
			t.Fatalf("%q changed to %q without the secret %q in it", text, out, secret)
		}
		for i := range len(out) {
			if strings.HasPrefix(out[i:], secret) && !glued(out[:i], secret, out[i+len(secret):]) {
				t.Fatalf("%q left %q standing alone in %q", text, secret, out)
			}
		}
	})
}
