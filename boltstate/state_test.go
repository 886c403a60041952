package boltstate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// userID and platformID make distinct snowflake-shaped ids for user n.
func userID(n int) string     { return fmt.Sprintf("7%017d", n) }
func platformID(n int) string { return fmt.Sprintf("3%017d", n) }

// open opens the state in dir, closed at cleanup.
func open(t *testing.T, dir string) *boltstate.State {
	t.Helper()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func storeVote(u int, created, expires time.Time) voterewards.Vote {
	tv := topgg.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1 + u%2, CreatedAt: created.UTC(), ExpiresAt: expires.UTC()}
	return voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory}
}

func keys(votes []voterewards.Vote) []string {
	out := []string{}
	for _, v := range votes {
		out = append(out, v.Key())
	}
	return out
}

func TestState(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) voterewards.State {
		s, err := boltstate.Open(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestOpenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := boltstate.Open(dir)
	require.NoError(t, err)
	start := time.Now()
	second, err := boltstate.Open(dir)
	require.ErrorIs(t, err, boltstate.ErrLocked)
	assert.Nil(t, second)
	assert.Contains(t, err.Error(), dir)
	assert.Less(t, time.Since(start), 3*time.Second, "fails fast, does not hang")
	require.NoError(t, first.Close())

	again, err := boltstate.Open(dir)
	require.NoError(t, err, "free again once closed")
	require.NoError(t, again.Close())
}

// TestStateKeptAcrossReopen: what a State held is there after a restart,
// webhook fields and dedup included.
func TestStateKeptAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	a, b := storeVote(1, now.Add(-2*time.Hour), now.Add(10*time.Hour)), storeVote(2, now.Add(-time.Hour), now.Add(11*time.Hour))
	b.Origin, b.Hook = voterewards.OriginWebhook, &voterewards.Hook{ID: "42", Query: map[string]string{"ref": "x"}}
	cp := voterewards.Checkpoint{Cursor: "c9", LastSeen: now, Since: now.Add(-12 * time.Hour)}
	added, err := s.Ingest(ctx, &cp, []voterewards.Vote{a, b}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 2)
	b.Stats = added[1].Stats
	require.Equal(t, 1, b.Stats.Votes, "the vote's Stats are set")
	require.NoError(t, s.Delivered(ctx, a, true))
	require.NoError(t, s.Close())

	s, err = boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c9", snap.Checkpoint.Cursor)
	assert.True(t, snap.Checkpoint.Since.Equal(cp.Since))
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, b, snap.Pending[0], "votes come back as they went in, with their Stats")
	assert.Equal(t, keys([]voterewards.Vote{a}), keys(snap.Expiries))
	again := storeVote(2, now.Add(-time.Hour+time.Microsecond), now.Add(11*time.Hour))
	added, err = s.Ingest(ctx, nil, []voterewards.Vote{again}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	assert.Empty(t, added, "the dedup index survives the restart")
	st, err := s.Stats(ctx, b.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, b.Stats, st, "the ledger survives the restart")
	board, err := s.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	assert.Len(t, board, 2)
}

// TestUseFence: a directory is one process's: no fence is fine, a fleet's
// is refused.
func TestUseFence(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	require.NoError(t, s.UseFence(nil))
	require.ErrorIs(t, s.UseFence(func() int64 { return 1 }), voterewards.ErrNotShared)
}

// TestStateKeepsHashAndOptInsAcrossReopen: the command hash, the choices and
// the reminders recorded are there after a restart.
func TestStateKeepsHashAndOptInsAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.SaveHash(ctx, sha("commands")))
	require.NoError(t, s.SetReminder(ctx, "1", true))
	require.NoError(t, s.SetReminder(ctx, "2", true))
	require.NoError(t, s.Reminded(ctx, "1", "1@k"))
	require.NoError(t, s.Reminded(ctx, "3", "3@k"), "not opted in: nothing recorded")
	require.NoError(t, s.SetReminder(ctx, "1", true), "on again keeps the record")
	require.NoError(t, s.SetReminder(ctx, "2", false))
	require.NoError(t, s.Close())

	s = open(t, dir)
	hash, err := s.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, sha("commands"), hash)
	requireOptIns(t, s, map[string]optIn{"1": {true, "1@k"}, "2": {}, "3": {}})
}

// TestPrintingTheStateWhileItIngestsIsSafe: fmt of a State walked its
// database unlocked while votes were ingested (a data race, under -race).
func TestPrintingTheStateWhileItIngestsIsSafe(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	out := testlog.PrintWhile(func() {
		now := time.Now()
		for n := range 50 {
			tv := topgg.Vote{UserID: fmt.Sprintf("81%016d", n), PlatformID: fmt.Sprintf("31%016d", n), Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			_, err := s.Ingest(context.Background(), nil, []voterewards.Vote{{Vote: tv, Origin: voterewards.OriginWebhook}}, time.Hour)
			assert.NoError(t, err)
		}
	}, s)
	assert.Contains(t, out, "boltstate.State")
}
