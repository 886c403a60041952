package pgstore_test

// Findings of the hostile review (review-attack): each test fails on the
// code it names and is skipped until the owner fixes it.

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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestReviewZeroStore: a zero Store (not made by Open) is misuse: every
// method returns an error, none panics.
func TestReviewZeroStore(t *testing.T) {
	ctx := context.Background()
	var s pgstore.Store
	calls := map[string]func() error{
		"Stats":       func() error { _, err := s.Stats(ctx, "u"); return err },
		"Leaderboard": func() error { _, err := s.Leaderboard(ctx, time.Time{}, 10); return err },
		"Load":        func() error { _, err := s.Load(ctx); return err },
		"Ingest": func() error {
			_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(1, base)}, voterewards.DefaultStreakGrace)
			return err
		},
		"Delivered": func() error { return s.Delivered(ctx, vote(1, base), false) },
		"Expired":   func() error { return s.Expired(ctx, vote(1, base)) },
		"Prune":     func() error { return s.Prune(ctx, base, base) },
		"Follow":    func() error { return s.Follow(ctx, func(voterewards.Vote) {}, func() {}) },
		"Reward": func() error {
			h := s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { return nil })
			return h(ctx, vote(1, base))
		},
	}
	for name, call := range calls {
		var err error
		assert.NotPanics(t, func() { err = call() }, name)
		assert.Error(t, err, name)
	}
}

// TestReviewStatsNoUser: asking the ledger of user "" is misuse (no voter
// has that id: a caller's field left empty), an error, not a zero Stats.
func TestReviewStatsNoUser(t *testing.T) {
	s := open(t, pgstore.Config{})
	_, err := s.Stats(context.Background(), "")
	require.Error(t, err)
}

// TestReviewIdWithNUL: PostgreSQL text cannot hold a NUL byte; a vote whose
// id holds one (sent by the service, or a webhook) must not make the whole
// batch fail on every retry (the poller would be stuck behind it forever):
// it is refused alone (ErrInvalidVote) or stored, and the others are added.
func TestReviewIdWithNUL(t *testing.T) {
	s := open(t, pgstore.Config{})
	bad := vote(1, base)
	bad.PlatformID = "3\x0000000000000000001"
	good := vote(2, base)
	added, err := s.Ingest(context.Background(), nil, []voterewards.Vote{bad, good}, voterewards.DefaultStreakGrace)
	if err != nil {
		require.ErrorIs(t, err, voterewards.ErrInvalidVote)
	}
	keys := []string{}
	for _, v := range added {
		keys = append(keys, v.Key())
	}
	assert.Contains(t, keys, good.Key(), "the good vote of the batch is added")
}

// TestReviewIdWithNewline: the feed's payload joins keys with "\n"; a voter
// id holding one splits its key, and the vote never reaches a follower.
func TestReviewIdWithNewline(t *testing.T) {
	s := open(t, pgstore.Config{})
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	v := vote(1, base)
	v.PlatformID = "3\n00000000000000001"
	require.Len(t, ingest(t, s, nil, v), 1)
	g := receive(t, got, 5*time.Second, "the vote of a voter whose id holds a newline never reached Follow")
	assert.Equal(t, v.Key(), g.Key())
}

// TestReviewAncientVote: a vote's CreatedAt before 1678 does not fit
// UnixNano; the store must keep what it was given (or refuse the vote), not
// a different time.
func TestReviewAncientVote(t *testing.T) {
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

// TestReviewStoreErrorsHideCredentials: Connect hides the user and password
// of the URL (the user may be the secret); once connected, the Store's own
// errors for a server gone (pgconn's "failed to connect to `user=...`")
// name the user, and keep a *pgconn.ConnectError whose Config holds the
// password for anything that unwraps it (errors.As, a logger that walks
// the chain). The Store should scrub them as Connect does.
func TestReviewStoreErrorsHideCredentials(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	admin := srv.Pool(t)
	const user, password = "s3cr3tuser", "s3cr3tPa55word"
	_, err := admin.Exec(ctx, `CREATE ROLE `+user+` LOGIN SUPERUSER PASSWORD '`+password+`'`)
	require.NoError(t, err)
	u, err := url.Parse(srv.Database(t))
	require.NoError(t, err)
	u.User = url.UserPassword(user, password)
	pool, err := pgstore.Connect(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	srv.Kill()
	pool.Reset() // no idle connection left: the next call dials
	for name, call := range map[string]func() error{
		"Stats":       func() error { _, err := s.Stats(ctx, "u"); return err },
		"Leaderboard": func() error { _, err := s.Leaderboard(ctx, time.Time{}, 10); return err },
		"Load":        func() error { _, err := s.Load(ctx); return err },
		"Ingest": func() error {
			_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(1, base)}, voterewards.DefaultStreakGrace)
			return err
		},
	} {
		err := call()
		require.Error(t, err, name)
		for _, shown := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			assert.NotContains(t, shown, "s3cr3t", "%s: the credentials in the error", name)
		}
		if ce, ok := errors.AsType[*pgconn.ConnectError](err); ok {
			assert.NotContains(t, ce.Config.Password, "s3cr3t", "%s: the password reachable through errors.As", name)
		}
	}
}

// TestReviewRewardOfNilHandler: Reward(nil) and Expiry(nil) return a
// handler that fails every vote, so the misuse shows only once votes come,
// as failed deliveries retried and given up. Returning nil would make
// voterewards.New (OnReward is required) and the plugin refuse it at once.
func TestReviewRewardOfNilHandler(t *testing.T) {
	s := open(t, pgstore.Config{})
	assert.Nil(t, s.Reward(nil), "Reward(nil)")
	assert.Nil(t, s.Expiry(nil), "Expiry(nil)")
}

// TestReviewStreakGraceForever: a StreakGrace of "forever" (the longest
// Duration) puts StreakUntil past 2262, which UnixNano cannot hold: the
// store reads back another time and every vote restarts the streak (the
// memory and Redis stores keep it; bolt keeps April 2262, the last instant
// it holds).
func TestReviewStreakGraceForever(t *testing.T) {
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
	}
}
