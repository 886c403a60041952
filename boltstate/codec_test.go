package boltstate

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

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

// TestBoltLedgerDamagedRecords: a damaged ledger record, month standing or
// board entry is an error naming the file from the call that reads it,
// never a crash, and the other voters' reads go on.
func TestBoltLedgerDamagedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(u string, created time.Time) voterewards.Vote {
		return newVote(topgg.Vote{PlatformID: u, Weight: 1, CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)})
	}
	for _, tc := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		// what fails: the voter's Stats, the all-time board, an Ingest of
		// the voter's next vote, the month's board
		stats, board, ingest, month bool
	}{
		{"ledger record", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(bucketLedger)).Put([]byte("1"), []byte{ledgerVersion, 0xff})
		}, true, false, true, false},
		{"ledger version", func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucketLedger))
			rec := append([]byte{9}, b.Get([]byte("1"))[1:]...)
			return b.Put([]byte("1"), rec)
		}, true, false, true, false},
		{"month standing", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(bucketMonths)).Put(monthKey(voterewards.MonthOf(now.Add(-48*time.Hour)), "1"), []byte{1})
		}, false, false, true, false},
		{"board entry", func(tx *bolt.Tx) error {
			sp := span(now)
			return tx.Bucket([]byte(bucketBoard)).Put(append(sp[:], 1, 2, 3), []byte{1})
		}, false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, storeFile)
			s, err := Open(dir)
			require.NoError(t, err)
			_, err = s.Ingest(ctx, nil, []voterewards.Vote{mk("1", now), mk("2", now)}, voterewards.DefaultStreakGrace)
			require.NoError(t, err)
			require.NoError(t, s.db.Update(tc.damage))

			check := func(failed bool, err error, what string) {
				t.Helper()
				if failed {
					require.Error(t, err, what)
					assert.ErrorIs(t, err, errBadRecord, what)
					assert.Contains(t, err.Error(), path, "%s: the error names the file", what)
				} else {
					assert.NoError(t, err, what)
				}
			}
			_, err = s.Stats(ctx, "1")
			check(tc.stats, err, "Stats")
			_, err = s.Leaderboard(ctx, time.Time{}, 10)
			check(tc.board, err, "the all-time board")
			_, err = s.Leaderboard(ctx, now, 10)
			check(tc.month, err, "the month's board")
			// A late vote of February: its month's standing is read.
			_, err = s.Ingest(ctx, nil, []voterewards.Vote{mk("1", now.Add(-48*time.Hour))}, voterewards.DefaultStreakGrace)
			check(tc.ingest, err, "Ingest")
			st, err := s.Stats(ctx, "2")
			require.NoError(t, err, "another voter's ledger reads")
			assert.Equal(t, 1, st.Votes)
			require.NoError(t, s.Close())

			s, err = Open(dir)
			require.NoError(t, err, "a damaged record does not keep the file from opening")
			require.NoError(t, s.Close())
		})
	}
}

func TestCodecStatsRoundTrip(t *testing.T) {
	t.Parallel()
	v := newVote(topgg.Vote{UserID: "1", PlatformID: "2", Weight: 2,
		CreatedAt: time.Date(2026, 1, 17, 23, 36, 6, 347320001, time.UTC), ExpiresAt: time.Date(2026, 1, 18, 11, 36, 6, 347320001, time.UTC)})
	v.Stats = voterewards.Stats{}.Add(v, voterewards.DefaultStreakGrace)
	got, err := decodeVote(encodeVote(v))
	require.NoError(t, err)
	assert.Equal(t, v, got)
	st, err := decodeLedger("2", encodeLedger(v.Stats))
	require.NoError(t, err)
	assert.Equal(t, v.Stats, st)
	for n := range len(encodeLedger(v.Stats)) {
		_, err := decodeLedger("2", encodeLedger(v.Stats)[:n])
		assert.ErrorIs(t, err, errBadRecord, "cut to %d bytes", n)
	}
	sp := span(v.CreatedAt)
	want := voterewards.Standing{UserID: "2", Votes: 3, Total: 5, ReachedAt: v.CreatedAt}
	got2, err := decodeBoard(boardKey(sp, want), encodeVotes(3))
	require.NoError(t, err)
	assert.Equal(t, want, got2)
}
