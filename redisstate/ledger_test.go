package redisstate

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// ledgerVote is voter u's vote created at c (expiring 12 h later).
func ledgerVote(u int, c time.Time, weight int) voterewards.Vote {
	return voteOf(u, weight, voterewards.OriginHistory, c, c.Add(voterewards.VoteLifetime))
}

// TestVoteLedgerKeysShareTheBotsSlot: every key the ledger writes (votes
// over several months) is in the bot's key space, so that on Redis Cluster
// the ingest script's keys are in one slot.
func TestVoteLedgerKeysShareTheBotsSlot(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "slot")
	base := time.Date(2026, 1, 31, 20, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for i := range 6 {
		votes = append(votes, ledgerVote(i%2, base.Add(time.Duration(i)*20*24*time.Hour), 1))
	}
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	keys, err := srv.Client(t).Keys(ctx, "*").Result()
	require.NoError(t, err)
	var boards int
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(k, fleet.Key("slot", "")), "key %q is outside the bot's hash tag", k)
		if strings.Contains(k, ":votes:board:") {
			boards++
		}
	}
	assert.Equal(t, 5, boards, "one board per month touched (Jan to May)")
}

// TestVoteLedgerIsBoundedPerVoter: a voter's 120 votes over two months
// leave one ledger field, one all-time board member, and one standing per
// month: no per-vote history once the dedup set is pruned.
func TestVoteLedgerIsBoundedPerVoter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "bounded")
	rdb := srv.Client(t)
	base := time.Date(2026, 3, 1, 0, 30, 0, 0, time.UTC)
	var want voterewards.Stats
	for i := range 120 {
		v := ledgerVote(1, base.Add(time.Duration(i)*12*time.Hour), 1+i%2)
		added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
		require.NoError(t, err)
		require.Len(t, added, 1)
		want = want.Add(v, voterewards.DefaultStreakGrace)
	}
	require.NoError(t, s.Prune(ctx, base.Add(365*24*time.Hour), base.Add(365*24*time.Hour)))
	got, err := s.Stats(ctx, want.UserID)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 120, got.Streak, "a vote every 12 h is one streak")

	assert.EqualValues(t, 1, rdb.HLen(ctx, s.ledger).Val())
	assert.EqualValues(t, 1, rdb.ZCard(ctx, s.board).Val())
	for _, m := range []time.Time{base, base.AddDate(0, 1, 0)} {
		board, standings := s.monthKeys(m)
		assert.EqualValues(t, 1, rdb.ZCard(ctx, board).Val())
		assert.EqualValues(t, 1, rdb.HLen(ctx, standings).Val())
	}
	assert.Zero(t, rdb.HLen(ctx, s.seen).Val(), "pruned: the ledger outlives the dedup set")
}

// TestVoteLedgerFarTimes: votes before 1970 and in year 1 (the zero
// month's edge, where the Lua rule must tell a zero Month from a real one)
// give the Stats and boards of Stats.Add.
func TestVoteLedgerFarTimes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "far")
	for u, base := range []time.Time{
		time.Date(1969, 12, 31, 18, 0, 0, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2999, 12, 31, 23, 59, 59, 5, time.UTC),
	} {
		var want voterewards.Stats
		for i, d := range []time.Duration{0, 13 * time.Hour, 72 * time.Hour, 36 * time.Hour, 100 * time.Hour} {
			v := ledgerVote(u, base.Add(d), i%3)
			added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			require.NoError(t, err)
			require.Len(t, added, 1, "base %s, vote %d", base, i)
			want = want.Add(v, voterewards.DefaultStreakGrace)
			assert.Equal(t, want, added[0].Stats, "base %s, vote %d", base, i)
		}
		got, err := s.Stats(ctx, want.UserID)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		board, err := s.Leaderboard(ctx, want.Month, 10)
		require.NoError(t, err)
		i := slices.IndexFunc(board, func(st voterewards.Standing) bool { return st.UserID == want.UserID })
		require.GreaterOrEqual(t, i, 0, "base %s: not on its month's board", base)
		wantTotal := want.MonthTotal
		if want.Month.IsZero() { // year 1's January is the zero month: all time is read
			wantTotal = want.Total
		}
		assert.Equal(t, wantTotal, board[i].Total)
		assert.Equal(t, want.LastVote, board[i].ReachedAt)
	}
}

// TestVoteLedgerRefusedIngestCountsNothing: a stale leader's fenced ingest
// is refused before the ledger moves.
func TestVoteLedgerRefusedIngestCountsNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "refused")
	require.NoError(t, srv.Client(t).Incr(ctx, fleet.Key("refused", "fence")).Err())
	v := ledgerVote(1, time.Now(), 1)
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "x"}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.ErrorIs(t, err, fleet.ErrFenced)
	st, err := s.Stats(ctx, v.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, voterewards.Stats{UserID: v.PlatformID}, st)
	board, err := s.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	assert.Empty(t, board)
}

// TestVoteLedgerDamagedRecords: a ledger, checkpoint or vote record that
// does not decode is an error naming its key from Stats, Leaderboard and
// Load, never a panic or a zero.
func TestVoteLedgerDamagedRecords(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "damagedledger")
	v := ledgerVote(1, time.Now(), 1)
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	rdb := srv.Client(t)
	require.NoError(t, rdb.HSet(ctx, s.ledger, v.PlatformID, "1 2 x").Err())
	_, err = s.Stats(ctx, v.PlatformID)
	require.ErrorIs(t, err, errBadLedger)
	assert.ErrorContains(t, err, s.ledger)
	require.NoError(t, rdb.HSet(ctx, s.ledger, v.PlatformID, "").Err())
	_, err = s.Leaderboard(ctx, time.Time{}, 10)
	require.ErrorIs(t, err, errBadLedger)
	assert.ErrorContains(t, err, s.ledger)
	require.NoError(t, rdb.HSet(ctx, s.seen, v.Key(), "not a vote").Err())
	_, err = s.Load(ctx)
	require.ErrorIs(t, err, errBadVote)
	assert.ErrorContains(t, err, s.seen)
	require.NoError(t, rdb.Set(ctx, s.checkpoint, "not-a-number 0 c", 0).Err())
	_, err = s.Load(ctx)
	require.ErrorIs(t, err, errBadVote)
	assert.ErrorContains(t, err, s.checkpoint)
}

// TestVoteLedgerReadsAreOneRoundTrip: Stats is one command, and a
// leaderboard (all time or a month) one script, whatever its size.
func TestVoteLedgerReadsAreOneRoundTrip(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	leader, _ := leadingState(t, srv, "trips")
	base := time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for u := range 50 {
		votes = append(votes, ledgerVote(u, base.Add(time.Duration(u)*time.Minute), 1+u%3))
	}
	_, err := leader.Ingest(ctx, nil, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	rdb := newClient(t, srv.Addr())
	trips := &roundTrips{}
	rdb.AddHook(trips)
	s, err := New(rdb, "trips")
	require.NoError(t, err)
	_, err = s.Leaderboard(ctx, time.Time{}, 1) // loads the script: later calls are one EVALSHA
	require.NoError(t, err)
	trips.N.Store(0)
	st, err := s.Stats(ctx, votes[7].PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Total)
	assert.EqualValues(t, 1, trips.N.Swap(0), "Stats")
	for _, month := range []time.Time{{}, base} {
		board, err := s.Leaderboard(ctx, month, 50)
		require.NoError(t, err)
		assert.Len(t, board, 50)
		assert.EqualValues(t, 1, trips.N.Swap(0), "Leaderboard of %v", month)
	}
}

// TestVoteLedgerStatsOfNoUser: Stats(ctx, "") is misuse (the memory and
// bolt stores return an error wrapping topgg.ErrNilArgument), never a zero
// Stats.
func TestVoteLedgerStatsOfNoUser(t *testing.T) {
	t.Parallel()
	s, _ := leadingState(t, redistest.Start(t), "nouser")
	_, err := s.Stats(context.Background(), "")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
}
