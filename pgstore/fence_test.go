package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestFence: two processes share the store; once the newer leader (token
// 2) wrote, every leader write of the older one (token 1), SaveHash and
// Reminded included, is refused and commits nothing, while its webhook
// Ingests (no checkpoint) still go in.
func TestFence(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	old, cur, oldL, _ := twoTerms(t, pool, 2, pgstore.Config{})
	var err error

	a, b := vote(1, base), vote(2, base)
	ingest(t, old, &voterewards.Checkpoint{Cursor: "old"}, a)
	require.NoError(t, old.Delivered(ctx, a, true), "token 1 writes while no newer token was seen")
	ingest(t, cur, &voterewards.Checkpoint{Cursor: "new"}, b)

	_, err = old.Ingest(ctx, &voterewards.Checkpoint{Cursor: "stale"}, []voterewards.Vote{vote(3, base)}, voterewards.DefaultStreakGrace)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "Ingest with a checkpoint")
	assert.ErrorIs(t, old.Delivered(ctx, b, true), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Expired(ctx, a), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Prune(ctx, base.Add(voterewards.VoteLifetime*3), base.Add(voterewards.VoteLifetime*3)), pgstore.ErrFenced)
	called := false
	err = old.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, b)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "the reward transaction")
	assert.False(t, called, "a fenced process does not run the handler")
	require.NoError(t, cur.SetReminder(ctx, "1", true))
	assert.ErrorIs(t, old.SaveHash(ctx, "stale"), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Reminded(ctx, "1", "1@stale"), pgstore.ErrFenced)
	hash, err := cur.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, hash, "the refused SaveHash saved nothing")
	_, last, err := cur.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, last, "nor did the refused Reminded")

	snap, err := cur.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "new", snap.Checkpoint.Cursor, "the refused Ingest saved nothing")
	assert.Len(t, snap.Seen, 2, "nor added its vote; Prune removed nothing")
	assert.Len(t, snap.Pending, 1, "b is still pending")
	assert.Len(t, snap.Expiries, 1, "a's expiry is still pending")
	calls := 0
	require.NoError(t, cur.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { calls++; return nil })(ctx, b))
	assert.Equal(t, 1, calls, "the refused reward was not marked done")

	assert.Len(t, ingest(t, old, nil, vote(4, base)), 1, "a webhook Ingest is no leader write: not fenced")

	oldL.tok.Store(3)
	require.NoError(t, old.Delivered(ctx, b, false), "a newer term of the old process writes again")
	assert.ErrorIs(t, cur.Delivered(ctx, b, false), pgstore.ErrFenced, "and fences the other")
}

// TestFenceZeroTokenRefused: a process that is not leading (token 0) has
// every leader write refused before it touches the database.
func TestFenceZeroTokenRefused(t *testing.T) {
	ctx := context.Background()
	var l lease
	s := fenced(t, open(t, pgstore.Config{}), l.token)
	v := ingest(t, s, nil, vote(1, base))[0]
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, nil, voterewards.DefaultStreakGrace)
	assert.ErrorIs(t, err, pgstore.ErrFenced)
	assert.ErrorIs(t, s.Delivered(ctx, v, false), pgstore.ErrFenced)
	assert.ErrorIs(t, s.Expired(ctx, v), pgstore.ErrFenced)
	assert.ErrorIs(t, s.Prune(ctx, base, base), pgstore.ErrFenced)
	assert.ErrorIs(t, s.SaveHash(ctx, "h"), pgstore.ErrFenced)
	require.NoError(t, s.SetReminder(ctx, "1", true), "an opt-in is no leader write")
	assert.ErrorIs(t, s.Reminded(ctx, "1", "1@k"), pgstore.ErrFenced)
	called := false
	assert.ErrorIs(t, s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, v), pgstore.ErrFenced)
	assert.False(t, called)
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Pending, 1)
	assert.Empty(t, snap.Checkpoint.Cursor)
}

// TestNewTermFencesAtOnce: a newer leader's term raises the fence at its
// first action, a read (the Poller's Load): from then on every leader write
// of the older term is refused, though the newer leader wrote nothing yet.
func TestNewTermFencesAtOnce(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	old, cur, _, newL := twoTerms(t, pool, 0, pgstore.Config{})
	var err error
	a, b := vote(1, base), vote(2, base.Add(time.Hour))
	ingest(t, old, &voterewards.Checkpoint{Cursor: "old"}, a, b)
	require.NoError(t, old.Delivered(ctx, a, false), "token 1 leads")

	_, err = cur.Load(ctx) // a follower's read (token 0) raises nothing
	require.NoError(t, err)
	require.NoError(t, old.Delivered(ctx, a, false), "token 1 still leads: no newer term began")

	newL.tok.Store(2)
	_, err = cur.Load(ctx) // the first action of term 2
	require.NoError(t, err)

	assert.ErrorIs(t, old.Delivered(ctx, b, false), pgstore.ErrFenced, "Delivered of the older term")
	assert.ErrorIs(t, old.Expired(ctx, a), pgstore.ErrFenced, "Expired of the older term")
	_, err = old.Ingest(ctx, &voterewards.Checkpoint{Cursor: "stale"}, nil, voterewards.DefaultStreakGrace)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "Ingest of the older term")
	called := false
	err = old.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, b)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "the reward transaction of the older term")
	assert.False(t, called)
	_, err = old.Load(ctx)
	assert.NoError(t, err, "a read of the older term is no write: it still reads")

	snap, err := cur.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "old", snap.Checkpoint.Cursor)
	require.Len(t, snap.Pending, 1, "b is still pending")
	assert.Equal(t, b.Key(), snap.Pending[0].Key())
}

// TestNewTermFencesAtFirstWrite: a term whose first action is a write (no
// Load: a bot with its own leader election) raises the fence before it, in a
// transaction of its own, even when the write itself waits or fails.
func TestNewTermFencesAtFirstWrite(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	old, cur, _, _ := twoTerms(t, pool, 2, pgstore.Config{})
	var err error
	a := vote(1, base)
	ingest(t, old, &voterewards.Checkpoint{Cursor: "old"}, a)
	// Term 2's first action: a reward whose handler fails, so that the
	// reward's own transaction (and its fence check) rolls back.
	err = cur.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { return assert.AnError })(ctx, a)
	require.ErrorIs(t, err, assert.AnError)
	assert.ErrorIs(t, old.Delivered(ctx, a, false), pgstore.ErrFenced, "the fence stayed raised")
}

// TestPausedTransactionBounded: a leader paused in a reward's transaction
// (its handler blocks, the session sits idle in the transaction, holding
// the vote's row lock and the fence row's share lock) stalls the newer
// leader for about Config.TxTimeout at most: PostgreSQL aborts the paused
// transaction (its writes rolled back), the newer leader rewards the vote
// while the paused one is still stopped, and when the paused one resumes,
// its commit fails: the vote is rewarded once.
func TestPausedTransactionBounded(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	const timeout = 300 * time.Millisecond
	_, err := pool.Exec(ctx, `CREATE TABLE credits (vote_key text NOT NULL, by text NOT NULL)`)
	require.NoError(t, err)
	credit := func(by string) pgstore.TxHandler {
		return func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			_, err := tx.Exec(ctx, `INSERT INTO credits VALUES ($1, $2)`, v.Key(), by)
			return err
		}
	}
	old, _, _, newL := twoTerms(t, pool, 0, pgstore.Config{TxTimeout: timeout})
	// The newer leader waits on the lock for the default TxTimeout: what
	// ends the stall is the paused transaction's own bound, however late a
	// loaded machine schedules either session.
	cur, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	cur = fenced(t, cur, newL.token)
	v := ingest(t, old, &voterewards.Checkpoint{Cursor: "c"}, vote(1, base))[0]

	paused, resumeCh := make(chan struct{}), make(chan struct{})
	resume := sync.OnceFunc(func() { close(resumeCh) })
	t.Cleanup(resume) // before the pool's Close, which waits for the paused handler's connection
	oldDone := make(chan error, 1)
	go func() {
		oldDone <- old.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			if err := credit("old")(ctx, tx, v); err != nil {
				return err
			}
			close(paused)
			<-resumeCh // the process is stopped here, inside its transaction
			return nil
		})(ctx, v)
	}()
	receive(t, paused, 10*time.Second, "the old leader's handler did not run")

	newL.tok.Store(2) // the lease passed on
	curDone := make(chan error, 1)
	go func() {
		if _, err := cur.Load(ctx); err != nil {
			curDone <- err
			return
		}
		curDone <- cur.Reward(credit("new"))(ctx, v)
	}()
	// Without the paused transaction's bound, the newer leader's own lock
	// wait (15 s) would end its Reward with an error.
	require.NoError(t, receive(t, curDone, 30*time.Second, "the new leader's reward never returned"),
		"the new leader was stalled by the paused one's transaction")
	resume()
	assert.Error(t, receive(t, oldDone, 10*time.Second, "the paused reward did not return"),
		"the paused transaction was aborted: its commit must fail")

	var by []string
	rows, err := pool.Query(ctx, `SELECT by FROM credits WHERE vote_key = $1`, v.Key())
	require.NoError(t, err)
	by, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"new"}, by, "the vote is rewarded once, by the new leader")
	assert.ErrorIs(t, old.Delivered(ctx, v, false), pgstore.ErrFenced)
}

// TestTxTimeoutConfig: a TxTimeout under a millisecond (other than zero,
// the default) is refused.
func TestTxTimeoutConfig(t *testing.T) {
	pool := pg.Pool(t)
	for _, d := range []time.Duration{-time.Second, time.Microsecond} {
		_, err := pgstore.Open(context.Background(), pool, pgstore.Config{TxTimeout: d})
		assert.ErrorAs(t, err, new(*topgg.ConfigError), "TxTimeout %v", d)
	}
}

// TestUseFenceOnceAndPing: UseFence(nil) leaves the leader writes
// unfenced, a fence fences them; a second UseFence is an error and
// changes nothing; UseFence while other calls run is no race. Ping answers
// nil while the database does, an error once it cannot.
func TestUseFenceOnceAndPing(t *testing.T) {
	ctx := context.Background()
	var l lease // token 0: not leading
	one := fenced(t, open(t, pgstore.Config{}), nil)
	require.NoError(t, one.SaveHash(ctx, "h"), "one process: unfenced")
	err := one.UseFence(l.token)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "twice")
	require.NoError(t, one.SaveHash(ctx, "h"), "the second UseFence changed nothing")

	s, pool := openPooled(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.SaveHash(ctx, "h") // before or after the fence: either answer
		assert.True(t, err == nil || errorsIs(err, pgstore.ErrFenced), "%v", err)
	})
	require.NoError(t, s.UseFence(l.token))
	wg.Wait()
	assert.ErrorContains(t, s.UseFence(nil), "twice")
	assert.ErrorIs(t, s.SaveHash(ctx, "h"), pgstore.ErrFenced, "the fence stayed")
	require.NoError(t, s.Ping(ctx))
	pool.Close()
	assert.Error(t, s.Ping(ctx), "a closed pool cannot take a write")
}
