package topgg

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTokenPayloadForms(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"bot":true,"id":"364806029876555776"}`)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		tok := "eyJhbGciOiJIUzI1NiJ9." + enc.EncodeToString(payload) + ".c2ln"
		require.Equal(t, legacyTokenHint, tokenHint(tok))
	}
	// A payload whose base64 differs between alphabets.
	odd := []byte(`{"bot":true,"x":"???>>>"}`)
	require.Equal(t, legacyTokenHint, tokenHint("h."+base64.StdEncoding.EncodeToString(odd)+".s"))
	require.Equal(t, legacyTokenHint, tokenHint("h."+base64.RawURLEncoding.EncodeToString(odd)+".s"))

	for _, tok := range []string{
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"_t":"","bot":true}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"bot":null}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"bot":{}}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`not json`)) + ".s",
		"h.!!!.s", "only.two", "a.b.c.d", "opaque-token", "",
	} {
		require.Empty(t, tokenHint(tok), tok)
	}
}
