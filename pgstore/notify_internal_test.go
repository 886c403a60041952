package pgstore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
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

// TestKeyPartsOfAVoteKey: a notification's key names its vote's voter and
// creation time, whatever the voter id holds ("@" too) and the time's zone;
// a string that is not a key names none.
func TestKeyPartsOfAVoteKey(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("UTC+2", 2*3600))
	for _, id := range []string{"300000000000000001", "a@b@2026-03-01T12:00:00Z", strings.Repeat("é", 512), ""} {
		v := voterewards.Vote{Vote: topgg.Vote{PlatformID: id, UserID: "7", CreatedAt: at}}
		voter, created, ok := keyParts(v.Key())
		require.True(t, ok, v.Key())
		assert.Equal(t, voterOf(v), voter)
		assert.Equal(t, at.UnixNano(), created)
	}
	for _, k := range []string{"", "no-at", "1@", "1@2026-13-01T00:00:00Z", "1@1600-01-01T00:00:00Z"} {
		_, _, ok := keyParts(k)
		assert.False(t, ok, k)
	}
}
