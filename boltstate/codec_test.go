package boltstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	v := newVote(topgg.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2,
		CreatedAt: time.Date(2026, 1, 17, 23, 36, 6, 347320001, time.UTC), ExpiresAt: time.Date(2026, 1, 18, 11, 36, 6, 347320001, time.UTC)})
	got, err := decodeVote(encodeVote(v))
	require.NoError(t, err)
	assert.Equal(t, v, got)
	_, err = decodeVote(encodeVote(v)[:20])
	assert.ErrorIs(t, err, errBadRecord)
}

func FuzzDecodeVote(f *testing.F) {
	f.Add(encodeVote(newVote(topgg.Vote{UserID: "1", PlatformID: "2", Weight: 1, CreatedAt: time.Unix(1, 0), ExpiresAt: time.Unix(2, 0)})))
	withStats := newVote(topgg.Vote{UserID: "1", Weight: 2, CreatedAt: time.Unix(1, 0), ExpiresAt: time.Unix(2, 0)})
	withStats.Stats = voterewards.Stats{}.Add(withStats, voterewards.DefaultStreakGrace)
	f.Add(encodeVote(withStats))
	f.Add([]byte{codecVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVote(b)
		if err != nil {
			return
		}
		again, err := decodeVote(encodeVote(v))
		require.NoError(t, err)
		assert.Equal(t, v, again)
	})
}

func FuzzDecodeLedger(f *testing.F) {
	v := newVote(topgg.Vote{UserID: "1", PlatformID: "2", Weight: 1, CreatedAt: time.Unix(1, 0), ExpiresAt: time.Unix(2, 0)})
	f.Add(encodeLedger(voterewards.Stats{}.Add(v, voterewards.DefaultStreakGrace)))
	f.Add([]byte{ledgerVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeLedger("u", b)
		if err != nil {
			return
		}
		again, err := decodeLedger("u", encodeLedger(s))
		require.NoError(t, err)
		assert.Equal(t, s, again)
	})
}
