package discord

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1", "41771983423143937", "18446744073709551615", "00012"} {
		v, ok := ParseID(s)
		want, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "0", "-1", "+1", "18446744073709551616", "99999999999999999999", "1a", " 1", "123456789012345678901"} {
		_, ok := ParseID(s)
		assert.False(t, ok, "%q", s)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1", "41771983423143937", "18446744073709551615"} {
		assert.True(t, ValidID(s), s)
	}
	for _, s := range []string{"", "0", "007", "+7", "18446744073709551616", "1 ", "12345678901234567890123"} {
		assert.False(t, ValidID(s), "%q", s)
	}
}

func TestCompareAndShard(t *testing.T) {
	t.Parallel()
	ids := []string{"100", "9", "41771983423143937", "20"}
	slices.SortFunc(ids, CompareIDs)
	assert.Equal(t, []string{"9", "20", "100", "41771983423143937"}, ids)
	assert.Equal(t, 0, CompareIDs("5", "5"))
	// 41771983423143937 >> 22 = 9959216934, which is 6 mod 16.
	assert.Equal(t, 6, ShardOf(41771983423143937, 16))
	assert.Equal(t, 0, ShardOf(41771983423143937, 1))
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "0", "18446744073709551615", "18446744073709551616", "", "-5", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseID(s)
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && want != 0 && s[0] >= '0' && s[0] <= '9'
		if ok != wantOK || (ok && v != want) {
			t.Fatalf("ParseID(%q) = %d, %v; strconv says %d, %v", s, v, ok, want, err)
		}
	})
}
