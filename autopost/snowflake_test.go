package autopost

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSnowflake(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1", "41771983423143937", "18446744073709551615", "00012"} {
		v, ok := parseSnowflake(s)
		want, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "0", "-1", "+1", "18446744073709551616", "99999999999999999999", "1a", " 1", "123456789012345678901"} {
		_, ok := parseSnowflake(s)
		assert.False(t, ok, "%q", s)
	}
}

func FuzzParseSnowflake(f *testing.F) {
	for _, s := range []string{"1", "0", "18446744073709551615", "18446744073709551616", "", "-5", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseSnowflake(s)
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && want != 0 && s[0] >= '0' && s[0] <= '9'
		if ok != wantOK || (ok && v != want) {
			t.Fatalf("parseSnowflake(%q) = %d, %v; strconv says %d, %v", s, v, ok, want, err)
		}
	})
}
