package boltstate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strings"
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
	// Prune reads the expiry alone, from every codec version's fixed start.
	exp, ok := voteExpires(encodeVote(v))
	assert.True(t, ok)
	assert.Equal(t, v.ExpiresAt, exp)
	exp, ok = voteExpires(encodeV2(v))
	assert.True(t, ok)
	assert.Equal(t, v.ExpiresAt, exp)
	_, ok = voteExpires(encodeVote(v)[:16])
	assert.False(t, ok)
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
			return tx.Bucket([]byte(bucketVoters)).Put(ledgerKey("1"), []byte{ledgerVersion, 0xff})
		}, true, false, true, false},
		{"ledger version", func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucketVoters))
			rec := append([]byte{9}, b.Get(ledgerKey("1"))[1:]...)
			return b.Put(ledgerKey("1"), rec)
		}, true, false, true, false},
		{"month standing", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(bucketMonths)).Put(timeKey(voterewards.MonthOf(now.Add(-48*time.Hour)), "1"), []byte{1})
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
	got2, err := decodeBoard(boardKey(sp, want), appendCounts(nil, 3))
	require.NoError(t, err)
	assert.Equal(t, want, got2)
}

// encodeV1 is the record format of round one.
func encodeV1(v topgg.Vote) []byte {
	b := appendTime(appendTime([]byte{codecV1}, v.CreatedAt), v.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(v.Weight))
	b = appendString(b, v.UserID)
	return appendString(b, v.PlatformID)
}

// TestVersion1FileIsMigrated: a state file written by round one (votes keyed
// by user id, no per-voter index) opens with its state whole, and dedups
// across sources from then on.
func TestVersion1FileIsMigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pendingV := topgg.Vote{UserID: "71", PlatformID: "31", Weight: 2, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(11 * time.Hour)}
	expiryV := topgg.Vote{UserID: "72", PlatformID: "32", Weight: 1, CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(10 * time.Hour)}
	db, err := bolt.Open(filepath.Join(dir, storeFile), 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		oldKey := func(v topgg.Vote) []byte { return timeKey(v.CreatedAt, v.UserID) }
		oldExpiry := func(v topgg.Vote) []byte { return timeKey(v.ExpiresAt, string(oldKey(v))) }
		meta, _ := tx.CreateBucket([]byte(bucketMeta))
		seen, _ := tx.CreateBucket([]byte(bucketSeen))
		pending, _ := tx.CreateBucket([]byte(bucketPending))
		expiry, _ := tx.CreateBucket([]byte(bucketExpiry))
		for _, err := range []error{
			meta.Put([]byte(keyVersion), []byte{1}), meta.Put([]byte(keyCursor), []byte("c7")), meta.Put([]byte(keyLastSeen), appendTime(nil, now)),
			seen.Put(oldKey(pendingV), encodeV1(pendingV)), seen.Put(oldKey(expiryV), encodeV1(expiryV)),
			pending.Put(oldKey(pendingV), encodeV1(pendingV)), expiry.Put(oldExpiry(expiryV), encodeV1(expiryV)),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())

	s, err := Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c7", snap.Checkpoint.Cursor)
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, voterewards.Vote{Vote: pendingV}.Key(), snap.Pending[0].Key())
	assert.Equal(t, voterewards.OriginHistory, snap.Pending[0].Origin)
	assert.Equal(t, 2, snap.Pending[0].Weight)
	require.Len(t, snap.Expiries, 1)
	assert.Len(t, snap.Seen, 2)
	assert.Equal(t, 1, snap.Pending[0].Stats.Votes, "the migrated vote has its Stats")
	st, err := s.Stats(ctx, "31")
	require.NoError(t, err)
	assert.Equal(t, 2, st.Total, "the ledger counts the file's votes")

	// Keyed by platform id now: delivery and expiry records find the votes.
	require.NoError(t, s.Delivered(ctx, snap.Pending[0], false))
	require.NoError(t, s.Expired(ctx, snap.Expiries[0]))
	// The per-voter index was built: a webhook record of a migrated vote
	// is a duplicate.
	hook := pendingV
	hook.UserID = ""
	hook.CreatedAt = hook.CreatedAt.Add(700 * time.Nanosecond)
	added, err := s.Ingest(ctx, nil, []voterewards.Vote{{Vote: hook, Origin: voterewards.OriginWebhook}}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	assert.Empty(t, added)
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	assert.Empty(t, snap.Expiries)
}

// encodeV2 is the record format of round two (no Stats).
func encodeV2(v voterewards.Vote) []byte {
	v.Stats = voterewards.Stats{}
	b := encodeVote(v)
	b[0] = codecV2
	return b[:len(b)-1] // the empty Stats' flag
}

// rewriteFile changes the store file at path with fn and sets its store
// version, as an older release would have left it.
func rewriteFile(t *testing.T, path string, version byte, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(keyVersion), []byte{version})
	}))
	require.NoError(t, db.Close())
}

// records returns a copy of b's keys and values, each value passed through conv.
func records(b *bolt.Bucket, conv func([]byte) ([]byte, error)) (keys, vals [][]byte, err error) {
	err = b.ForEach(func(k, v []byte) error {
		c, err := conv(v)
		keys, vals = append(keys, bytes.Clone(k)), append(vals, c)
		return err
	})
	return keys, vals, err
}

// downgradeToV3 rewrites a store file as version 3 kept it: the dedup set in
// seen, the ledger in ledger, the voters bucket an index of the votes' keys.
func downgradeToV3(t *testing.T, path string) {
	t.Helper()
	rewriteFile(t, path, 3, func(tx *bolt.Tx) error {
		voters := tx.Bucket([]byte(bucketVoters))
		seen, err1 := tx.CreateBucket([]byte(bucketSeen))
		ledger, err2 := tx.CreateBucket([]byte(bucketLedger))
		keys, vals, err3 := records(voters, func(v []byte) ([]byte, error) { return bytes.Clone(v), nil })
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		for i, k := range keys {
			n, l := binary.Uvarint(k)
			id := string(k[l : l+int(n)])
			if !isVoteKey(k) {
				if err := errors.Join(ledger.Put([]byte(id), vals[i]), voters.Delete(k)); err != nil {
					return err
				}
				continue
			}
			if err := errors.Join(seen.Put(timeKey(getTime(k[len(k)-8:]), id), vals[i]), voters.Put(k, nil)); err != nil {
				return err
			}
		}
		return nil
	})
}

// migrationNow is the migration tests' clock; migrationVote a vote of
// voter u (its ids "7"+u and "3"+u) at created, of weight w.
func migrationNow() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func migrationVote(u string, created time.Time, w int) voterewards.Vote {
	return newVote(topgg.Vote{UserID: "7" + u, PlatformID: "3" + u, Weight: w, CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)})
}

// TestVersion3FileIsMigrated: a version 3 file (the dedup set in seen, the
// ledger in ledger) opens with the same snapshot, ledger and boards, its
// votes still deduplicating and pruned, and the old buckets gone.
func TestVersion3FileIsMigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	now, mk := migrationNow(), migrationVote
	// Voter 1 across February and March (a late February vote last), voter 2 once.
	votes := []voterewards.Vote{mk("1", now.Add(-48*time.Hour), 2), mk("1", now, 1), mk("2", now.Add(-30*time.Hour), 2), mk("1", now.Add(-72*time.Hour), 1)}
	s, err := Open(dir)
	require.NoError(t, err)
	added, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c4", LastSeen: now}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 4)
	require.NoError(t, s.Delivered(ctx, added[0], true))
	require.NoError(t, s.Delivered(ctx, added[2], false))
	state := func(s *State) (snap *voterewards.Snapshot, stats []voterewards.Stats, boards [][]voterewards.Standing) {
		t.Helper()
		snap, err := s.Load(ctx)
		require.NoError(t, err)
		for _, l := range []*[]voterewards.Vote{&snap.Seen, &snap.Pending, &snap.Expiries} {
			slices.SortFunc(*l, func(a, b voterewards.Vote) int { return strings.Compare(a.Key(), b.Key()) })
		}
		for _, u := range []string{"31", "32", "33"} {
			st, err := s.Stats(ctx, u)
			require.NoError(t, err)
			stats = append(stats, st)
		}
		for _, m := range []time.Time{{}, now, now.Add(-48 * time.Hour)} {
			b, err := s.Leaderboard(ctx, m, 10)
			require.NoError(t, err)
			boards = append(boards, b)
		}
		return snap, stats, boards
	}
	wantSnap, wantStats, wantBoards := state(s)
	require.Len(t, wantSnap.Seen, 4)
	require.NoError(t, s.Close())
	downgradeToV3(t, filepath.Join(dir, storeFile))

	s, err = Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	snap, stats, boards := state(s)
	assert.Equal(t, wantSnap, snap)
	assert.Equal(t, wantStats, stats)
	assert.Equal(t, wantBoards, boards)
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		assert.Nil(t, tx.Bucket([]byte(bucketSeen)))
		assert.Nil(t, tx.Bucket([]byte(bucketLedger)))
		assert.Equal(t, []byte{storeVersion}, tx.Bucket([]byte(bucketMeta)).Get([]byte(keyVersion)))
		return nil
	}))

	// The migrated votes deduplicate, count on and are pruned.
	again := mk("1", now.Add(time.Minute), 1)
	added, err = s.Ingest(ctx, nil, []voterewards.Vote{again, mk("1", now.Add(24*time.Hour), 1)}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 1)
	assert.Equal(t, wantStats[0].Votes+1, added[0].Stats.Votes)
	require.NoError(t, s.Prune(ctx, now.Add(-40*time.Hour), now.Add(-30*time.Hour+voterewards.VoteLifetime)))
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Seen, 3, "the votes of before 40 h ago that expired are pruned")
}

// downgradeToV2 rewrites a store file as round two wrote it: version 2,
// records without Stats, no ledger buckets.
func downgradeToV2(t *testing.T, path string) {
	t.Helper()
	downgradeToV3(t, path)
	rewriteFile(t, path, 2, func(tx *bolt.Tx) error {
		for _, name := range []string{bucketLedger, bucketMonths, bucketBoard} {
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		for _, name := range []string{bucketSeen, bucketPending, bucketExpiry} {
			b := tx.Bucket([]byte(name))
			keys, vals, err := records(b, func(val []byte) ([]byte, error) {
				v, err := decodeVote(val)
				return encodeV2(v), err
			})
			if err != nil {
				return err
			}
			for i := range keys {
				if err := b.Put(keys[i], vals[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// TestVersion2FileIsMigrated: a round-two file (no ledger) opens with a
// ledger counted from the votes it holds, in creation order, and its
// pending votes and expiries carry their Stats.
func TestVersion2FileIsMigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	now, mk := migrationNow(), migrationVote
	// Given in an order other than creation's: the migration counts in
	// creation order (streak 3 for voter 1).
	votes := []voterewards.Vote{mk("1", now, 1), mk("1", now.Add(-48*time.Hour), 2), mk("1", now.Add(-24*time.Hour), 1), mk("2", now.Add(-30*time.Hour), 2)}
	s, err := Open(dir)
	require.NoError(t, err)
	_, err = s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c3"}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.NoError(t, s.Delivered(ctx, votes[1], true))
	require.NoError(t, s.Close())
	downgradeToV2(t, filepath.Join(dir, storeFile))

	s, err = Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	want := voterewards.Stats{}.Add(votes[1], voterewards.DefaultStreakGrace).Add(votes[2], voterewards.DefaultStreakGrace).Add(votes[0], voterewards.DefaultStreakGrace)
	got, err := s.Stats(ctx, "31")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 3, got.Streak)
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c3", snap.Checkpoint.Cursor)
	require.Len(t, snap.Pending, 3)
	for _, v := range snap.Pending {
		assert.NotZero(t, v.Stats.Votes, "pending %s has its Stats", v.Key())
		if v.Key() == votes[0].Key() {
			assert.Equal(t, want, v.Stats)
		}
	}
	require.Len(t, snap.Expiries, 1)
	assert.Equal(t, 1, snap.Expiries[0].Stats.Votes, "the first vote's Stats")
	board, err := s.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []voterewards.Standing{
		{UserID: "31", Votes: 3, Total: 4, ReachedAt: now},
		{UserID: "32", Votes: 1, Total: 2, ReachedAt: now.Add(-30 * time.Hour)},
	}, board)
	feb, err := s.Leaderboard(ctx, now.Add(-48*time.Hour), 10)
	require.NoError(t, err)
	assert.Len(t, feb, 2, "February's board")

	// Counting goes on from the migrated ledger.
	added, err := s.Ingest(ctx, nil, []voterewards.Vote{mk("1", now.Add(24*time.Hour), 1)}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 1)
	assert.Equal(t, 4, added[0].Stats.Streak)
}

// TestStoreVersionOfTheFile: a file whose store version is above this
// release's is ErrFileTooNew (a newer go-topgg wrote it: upgrade, keep the
// file); a version no release writes, or a migration that cannot read the
// records its version says, is a *DamagedError naming the file.
func TestStoreVersionOfTheFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version []byte
		tooNew  bool
	}{{[]byte{storeVersion + 1}, true}, {[]byte{255}, true}, {[]byte{0}, false}, {[]byte{4, 4}, false}, {[]byte{}, false}, {[]byte{1}, false}} {
		dir := t.TempDir()
		s, err := Open(dir)
		require.NoError(t, err)
		_, err = s.Ingest(context.Background(), nil, []voterewards.Vote{{Vote: topgg.Vote{UserID: "1", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}}}, 0)
		require.NoError(t, err)
		require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(bucketMeta)).Put([]byte(keyVersion), c.version)
		}))
		require.NoError(t, s.Close())
		_, err = Open(dir)
		var d *DamagedError
		if c.tooNew {
			assert.ErrorIs(t, err, ErrFileTooNew, "version %v", c.version)
			assert.False(t, errors.As(err, &d), "version %v: not damage", c.version)
		} else {
			assert.True(t, errors.As(err, &d), "version %v: %v", c.version, err)
		}
	}
}
