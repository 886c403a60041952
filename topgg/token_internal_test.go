package topgg

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProjectIDFromTokenForms(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"_t":"","id":"364806029876555776"}`)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		tok := "eyJhbGciOiJIUzI1NiJ9." + enc.EncodeToString(payload) + ".c2ln"
		require.Equal(t, "364806029876555776", projectIDFromToken(tok))
	}
	// A payload whose base64 differs between alphabets.
	odd := []byte(`{"id":"1","x":"???>>>"}`)
	require.Equal(t, "1", projectIDFromToken("h."+base64.StdEncoding.EncodeToString(odd)+".s"))
	require.Equal(t, "1", projectIDFromToken("h."+base64.RawURLEncoding.EncodeToString(odd)+".s"))

	for tok, want := range map[string]string{
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"id":364806029876555776}`)) + ".s": "364806029876555776",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"_t":""}`)) + ".s":                 "",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"id":null}`)) + ".s":               "",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"id":{}}`)) + ".s":                 "",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`not json`)) + ".s":                  "",
		"h.!!!.s":      "",
		"only.two":     "",
		"a.b.c.d":      "",
		"opaque-token": "",
		"":             "",
	} {
		require.Equal(t, want, projectIDFromToken(tok), tok)
	}
}
