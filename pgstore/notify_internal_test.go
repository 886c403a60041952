package pgstore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPayloadsFitAndKeepOrder: the payloads hold every key once, in order,
// each within maxPayload, also when keys just fit or the longest ids are
// escaped six bytes a byte.
func TestPayloadsFitAndKeepOrder(t *testing.T) {
	k := func(n int) string { return strings.Repeat("k", n) }
	long := strings.Repeat("\x01", 1024) + "@2026-03-01T12:00:00Z"
	for _, c := range []struct {
		keys []string
		n    int
	}{
		{[]string{"a"}, 1},
		{[]string{k(maxPayload - 4)}, 1},      // ["k…"]: exactly maxPayload
		{[]string{k(maxPayload - 8), "b"}, 1}, // ["k…","b"]: exactly maxPayload
		{[]string{k(maxPayload - 7), "b"}, 2}, // a byte too many for one
		{[]string{long, "1@x", long, long, "2@x"}, 3},
	} {
		ps := payloads(c.keys)
		var got []string
		for _, p := range ps {
			require.LessOrEqual(t, len(p), maxPayload)
			var part []string
			require.NoError(t, json.Unmarshal([]byte(p), &part))
			got = append(got, part...)
		}
		assert.True(t, slices.Equal(c.keys, got), "every key once, in order")
		assert.Equal(t, c.n, len(ps))
	}
}
