package httpx

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestStatusRecorder(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	r := &StatusRecorder{ResponseWriter: w}
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusOK) // superfluous: net/http keeps the first too
	assert.Equal(t, http.StatusTeapot, r.Status)

	r = &StatusRecorder{ResponseWriter: httptest.NewRecorder()}
	_, err := r.Write([]byte("x"))
	assert.NoError(t, err)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, 0, (&StatusRecorder{}).Status, "nothing written: 0")
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"localhost", "127.0.0.1", "127.0.0.2", "::1"} {
		assert.True(t, Loopback(h), h)
	}
	for _, h := range []string{"", "example.com", "10.0.0.1", "[::1]", "localhost.example", "0.0.0.0"} {
		assert.False(t, Loopback(h), h)
	}
}

// TestWithinNamesWhatHangs: a wait that returns is waited for; one that hangs
// past the bound panics naming it, and is not waited for.
func TestWithinNamesWhatHangs(t *testing.T) {
	t.Parallel()
	ran := false
	Within("a quick wait", func() { ran = true })
	assert.True(t, ran)

	hung := make(chan struct{})
	defer close(hung)
	assert.PanicsWithValue(t, "still waiting after 10ms for the server's handlers", func() {
		within(10*time.Millisecond, "the server's handlers", func() { <-hung })
	})
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=."

const fuzzToken = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJfdCI6IiIsImlkIjoiMzY0ODA2MDI5ODc2NTU1Nzc2In0=.c2lnbmF0dXJlK3NpZ25hdHVyZS9zaWduYXR1cmU"

// secretsOf lists what must never be shown of token: itself and its long parts.
func secretsOf(token string) []string {
	out := []string{token}
	for _, p := range strings.Split(token, ".") {
		if len(p) >= MinSecretPart {
			out = append(out, p)
		}
	}
	return out
}

// FuzzScrubber: whatever the token (of the characters tokens are made of) and the
// text, the scrubbed text holds neither the token nor its long parts, and a text
// cut short does not end with the start of one.
func FuzzScrubber(f *testing.F) {
	f.Add(fuzzToken, []byte("Bearer "+fuzzToken), false)
	f.Add(fuzzToken, []byte("x: "+fuzzToken[:30]), true)
	f.Add("abc.defghijk.lmn+/=", []byte(`"abc.defghijk.lmn\u002B\/\u003D" abc.defghijk.lmn%2B%2F%3D defghijk`), false)
	f.Fuzz(func(t *testing.T, token string, text []byte, truncated bool) {
		if len(token) < MinSecretPart || strings.Trim(token, tokenAlphabet) != "" {
			return
		}
		out := NewScrubber(token)(text, truncated)
		for _, secret := range secretsOf(token) {
			if bytes.Contains(out, []byte(secret)) {
				t.Fatalf("%q scrubbed to %q still holds %q", text, out, secret)
			}
			for k := MinPartialTail; truncated && k < len(secret); k++ {
				if bytes.HasSuffix(out, []byte(secret[:k])) {
					t.Fatalf("%q scrubbed to %q ends with the start of %q", text, out, secret)
				}
			}
		}
		if !bytes.Contains(out, []byte(Redacted)) && !bytes.Equal(out, text) {
			t.Fatalf("%q changed to %q with nothing redacted", text, out)
		}
	})
}

// TestScrubberTextAndErr: a nil Scrubber (no token) changes nothing; an error with no
// trace of the token is returned as it is, one with a trace loses its chain.
func TestScrubberTextAndErr(t *testing.T) {
	t.Parallel()
	var none Scrubber
	assert.Equal(t, "x "+fuzzToken, none.Text("x "+fuzzToken))
	s := NewScrubber(fuzzToken)
	assert.Equal(t, "Bearer "+Redacted, s.Text("Bearer "+fuzzToken))
	plain := errors.New("plain")
	assert.Same(t, plain, s.Err(plain))
	wrapped := &url.Error{Op: "Get", URL: "x", Err: errors.New("echo " + fuzzToken)}
	got := s.Err(wrapped)
	assert.NotContains(t, got.Error(), fuzzToken)
	var ue *url.Error
	assert.False(t, errors.As(got, &ue), "the original, which still holds the token, is dropped")
}

func TestURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"redis://:hunter2@127.0.0.1:6379/0":              "redis://xxxxx@127.0.0.1:6379/0",
		"redis://user:hunter2@host:1/0":                  "redis://xxxxx@host:1/0",
		"redis://hunter2@host:1":                         "redis://xxxxx@host:1",
		"https://ops:pw@proxy.example/api/v9?sig=s#frag": "https://xxxxx@proxy.example/api/v9?...",
		"https://top.gg/api/":                            "https://top.gg/api/",
		"::not a url":                                    "the URL",
	} {
		assert.Equal(t, want, RedactRawURL(raw), raw)
	}
}

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
