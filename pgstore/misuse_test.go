package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestStatsNoUser: the ledger of user "" is misuse (a caller's field left
// empty), an error, not the zero Stats of a voter who never voted.
func TestStatsNoUser(t *testing.T) {
	s := open(t, pgstore.Config{})
	_, err := s.Stats(context.Background(), "")
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
}

// TestFeedIdWithNewline: a voter id holding a newline (or any character
// text holds) reaches Follow: the notification is no longer split on one.
func TestFeedIdWithNewline(t *testing.T) {
	s := open(t, pgstore.Config{})
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	v := vote(1, base)
	v.PlatformID = "3\n0000000000000000\"1,]"
	w := vote(2, base)
	require.Len(t, ingest(t, s, nil, v, w), 2)
	assert.Equal(t, v.Key(), receive(t, got, 5*time.Second, "the vote of an id holding a newline never reached Follow").Key())
	assert.Equal(t, w.Key(), receive(t, got, 5*time.Second, "the vote after it never reached Follow").Key())
}

// TestStoreErrorsHideCredentials: once connected, the Store's errors for a
// server gone (pgconn names the user of a failed dial, and its
// *pgconn.ConnectError holds the password in its Config) show neither, and
// hand no ConnectError to errors.As; nor does Ping's.
func TestStoreErrorsHideCredentials(t *testing.T) {
	ctx := context.Background()
	const user, password = "s3cr3tuser", "s3cr3tPa55word"
	var pool *pgxpool.Pool
	var s *pgstore.Store
	t.Run("connected", func(t *testing.T) { // the server is stopped when this ends
		srv := pgstoretest.Start(t)
		_, err := srv.Pool(t).Exec(ctx, `CREATE ROLE `+user+` LOGIN SUPERUSER PASSWORD '`+password+`'`)
		require.NoError(t, err)
		u, err := url.Parse(srv.URL(t))
		require.NoError(t, err)
		u.User = url.UserPassword(user, password)
		pool, err = pgstore.Connect(ctx, u.String())
		require.NoError(t, err)
		var l lease
		l.tok.Store(1)
		s, err = pgstore.Open(ctx, pool, pgstore.Config{})
		require.NoError(t, err)
		fenced(t, s, l.token)
	})
	require.NotNil(t, s, "the store was never opened")
	t.Cleanup(pool.Close)
	pool.Reset() // no idle connection left: the next call dials
	for name, call := range map[string]func() error{
		"Stats":       func() error { _, err := s.Stats(ctx, "u"); return err },
		"Leaderboard": func() error { _, err := s.Leaderboard(ctx, time.Time{}, 10); return err },
		"Load":        func() error { _, err := s.Load(ctx); return err },
		"Ingest": func() error {
			_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{vote(1, base)}, voterewards.DefaultStreakGrace)
			return err
		},
		"Delivered": func() error { return s.Delivered(ctx, vote(1, base), false) },
		"Reward": func() error {
			return s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { return nil })(ctx, vote(1, base))
		},
		"Ping":     func() error { return s.Ping(ctx) },
		"LoadHash": func() error { _, err := s.LoadHash(ctx); return err },
		"SaveHash": func() error { return s.SaveHash(ctx, "h") },
		"Reminder": func() error { _, _, err := s.Reminder(ctx, "1"); return err },
		"Reminded": func() error { return s.Reminded(ctx, "1", "1@k") },
	} {
		err := call()
		require.Error(t, err, name)
		for _, shown := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			assert.NotContains(t, shown, "s3cr3t", "%s: the credentials in the error", name)
		}
		_, isConnect := errors.AsType[*pgconn.ConnectError](err)
		assert.False(t, isConnect, "%s: a ConnectError (its Config holds the password) reachable through errors.As", name)
	}
}

// TestStreakGraceForever: a StreakGrace of "forever" (the longest Duration)
// puts StreakUntil past April 2262, beyond Unix nanoseconds: the store keeps
// the last instant they hold, so the streak goes on (it wrapped around into
// 1677 and restarted every streak).
func TestStreakGraceForever(t *testing.T) {
	s := open(t, pgstore.Config{})
	const forever = time.Duration(math.MaxInt64)
	for i := range 3 {
		v := vote(1, base.Add(time.Duration(i)*30*24*time.Hour)) // a month apart: only the grace keeps the streak
		added, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, forever)
		require.NoError(t, err)
		require.Len(t, added, 1)
		assert.Equal(t, i+1, added[0].Stats.Streak, "vote %d", i)
		st, err := s.Stats(context.Background(), v.PlatformID)
		require.NoError(t, err)
		assert.Equal(t, i+1, st.Streak, "vote %d, read back", i)
		assert.True(t, st.StreakUntil.After(base.Add(200*365*24*time.Hour)), "StreakUntil %v", st.StreakUntil)
	}
}

// TestIngestRefusesUnstorableIdsAlone: a vote whose id PostgreSQL's text
// cannot hold (a NUL byte, invalid UTF-8) is refused alone; the rest of the
// batch, and the checkpoint, go in (the whole batch failing on every retry
// would stall the poll behind it for good).
func TestIngestRefusesUnstorableIdsAlone(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	nul, bad, good := vote(1, base), vote(2, base), vote(3, base)
	nul.PlatformID = "3\x0000000000000000001"
	bad.UserID = "7\xff"
	added, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{nul, bad, good}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 1)
	assert.Equal(t, good.Key(), added[0].Key())
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Seen, 1)
	assert.Equal(t, "c", snap.Checkpoint.Cursor)
}

// TestAncientVoteIsRefusedAlone: a vote's CreatedAt before 1678 does not fit
// UnixNano; the store refuses it alone (the Poller refuses it before, as any
// created_at before 2000), and never keeps a different time.
func TestAncientVoteIsRefusedAlone(t *testing.T) {
	s := open(t, pgstore.Config{})
	old := time.Date(1000, 6, 15, 0, 0, 0, 0, time.UTC)
	v := vote(1, old)
	added, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	if err != nil {
		require.ErrorIs(t, err, voterewards.ErrInvalidVote)
		return
	}
	assert.Empty(t, added, "refused alone (logged), not stored with another time")
	st, err := s.Stats(context.Background(), v.PlatformID)
	require.NoError(t, err)
	assert.Zero(t, st.Votes)
}

// TestRewardOfNilHandler: Reward(nil) and Expiry(nil) return nil, so that
// voterewards.New (OnReward is required) and the plugin refuse the misuse at
// once, rather than a handler failing every vote as it comes.
func TestRewardOfNilHandler(t *testing.T) {
	s := open(t, pgstore.Config{})
	assert.Nil(t, s.Reward(nil), "Reward(nil)")
	assert.Nil(t, s.Expiry(nil), "Expiry(nil)")
}
