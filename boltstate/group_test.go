package boltstate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// A change that panics inside the shared write transaction must neither take
// the other changes down nor leave the store unable to write.
func TestWritesAfterAPanickingChange(t *testing.T) {
	t.Parallel()
	s := openNoSync(t)
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	v := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{LastSeen: now}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = s.ingest.submit(ctx, s.db, &ingestReq{write: func(*bolt.Tx) error { panic("boom") }}, true)
	}()
	assert.Equal(t, "boom", testkit.Recv(t, panicked, "the panicking change never returned"), "the panic reaches its caller")

	done := make(chan error, 1)
	go func() { done <- s.Delivered(ctx, v, true) }()
	require.NoError(t, testkit.Recv(t, done, "the store hangs after a panic in a change"))
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	assert.Len(t, snap.Expiries, 1)
}

// TestDeliveryRecordSharesTheNextWebhookVotesCommit: a delivery record waits
// to ride in the commit of the next webhook vote, so that deliveries back to
// back cost one durable commit each, not two.
func TestDeliveryRecordSharesTheNextWebhookVotesCommit(t *testing.T) {
	t.Parallel()
	s := openNoSync(t)
	s.ingest.delay = time.Minute // longer than the test: only the vote's commit can take the record
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	webhookVote := func(user string) voterewards.Vote {
		v := newVote(topgg.Vote{UserID: user, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
		v.Origin = voterewards.OriginWebhook
		return v
	}
	first, next := webhookVote("1"), webhookVote("2")
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{first}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	commits := func() (id int) {
		require.NoError(t, s.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }))
		return id
	}
	before := commits()

	recorded := make(chan error, 1)
	go func() { recorded <- s.Delivered(ctx, first, false) }()
	require.Eventually(t, func() bool {
		s.ingest.mu.Lock()
		defer s.ingest.mu.Unlock()
		return len(s.ingest.queue) == 1
	}, testkit.Wait, time.Millisecond, "the record is queued")
	_, err = s.Ingest(ctx, nil, []voterewards.Vote{next}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.NoError(t, testkit.Recv(t, recorded, "the record did not ride in the vote's commit"))
	assert.Equal(t, before+1, commits(), "one commit for the record and the vote")
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, next.Key(), snap.Pending[0].Key())
}

// requireQueued waits until n changes wait in s's group commit.
func requireQueued(t *testing.T, s *State, n int, msg string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.ingest.mu.Lock()
		defer s.ingest.mu.Unlock()
		return len(s.ingest.queue) == n
	}, testkit.Wait, time.Millisecond, msg)
}

// A change that panics while it rides in another caller's commit panics in
// its own caller's goroutine, as bbolt's DB.Batch does; the other changes commit.
func TestARidingChangesPanicReachesItsCaller(t *testing.T) {
	t.Parallel()
	s := openNoSync(t)
	s.ingest.delay = time.Minute // only the vote's commit can take the change
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	v := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})

	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = s.ingest.submit(ctx, s.db, &ingestReq{write: func(*bolt.Tx) error { panic("boom") }}, ride)
	}()
	requireQueued(t, s, 1, "the change is queued")
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	assert.Equal(t, "boom", testkit.Recv(t, panicked, "the panicking change never returned"))
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Pending, 1)
}

// A panic in bbolt's commit, outside every change, fails each change of the
// batch (none is told it is durable) and leaves the store able to write.
func TestAPanicInTheCommitFailsItsBatch(t *testing.T) {
	t.Parallel()
	s := openNoSync(t)
	s.ingest.delay = time.Minute // the record rides in the panicking commit
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	v := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})

	recorded, failed := make(chan error, 1), make(chan error, 1)
	go func() { recorded <- s.Delivered(ctx, v, true) }()
	requireQueued(t, s, 1, "the record is queued")
	go func() {
		defer func() { assert.Nil(t, recover(), "the commit's panic is an error") }()
		failed <- s.ingest.submit(ctx, s.db, &ingestReq{write: func(tx *bolt.Tx) error {
			tx.OnCommit(func() { panic("in the commit") }) // run by bbolt's Commit
			return nil
		}}, lead)
	}()
	assert.ErrorContains(t, testkit.Recv(t, failed, "the committing change never returned"), "in the commit")
	assert.ErrorContains(t, testkit.Recv(t, recorded, "the record never returned"), "in the commit")

	stored := make(chan error, 1)
	go func() {
		_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
		stored <- err
	}()
	require.NoError(t, testkit.Recv(t, stored, "the store hangs after a panic in a commit"))
}

// A change whose context ends while it waits in the queue leaves it and is
// not written; one already taken by the commit in flight waits for it.
func TestAWriteWhoseContextEndsWhileQueued(t *testing.T) {
	t.Parallel()
	s := openNoSync(t)
	s.ingest.delay = time.Minute
	now := time.Now().UTC().Round(0)
	taken := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
	queued := newVote(topgg.Vote{UserID: "2", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
	takenCtx, cancelTaken := context.WithCancel(context.Background())
	queuedCtx, cancelQueued := context.WithCancel(context.Background())
	defer cancelTaken()
	defer cancelQueued()

	recorded := make(chan error, 1)
	go func() { recorded <- s.Delivered(takenCtx, taken, true) }()
	requireQueued(t, s, 1, "the record is queued")
	started, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	go func() {
		committed <- s.ingest.submit(context.Background(), s.db, &ingestReq{write: func(*bolt.Tx) error {
			close(started)
			<-release // a commit in flight, with the record
			return nil
		}}, lead)
	}()
	testkit.Recv(t, started, "the commit never started")
	stored := make(chan error, 1)
	go func() {
		_, err := s.Ingest(queuedCtx, nil, []voterewards.Vote{queued}, voterewards.DefaultStreakGrace)
		stored <- err
	}()
	requireQueued(t, s, 1, "the vote is queued behind the commit in flight")
	cancelQueued()
	assert.ErrorIs(t, testkit.Recv(t, stored, "a queued write waits for the turn after its context ended"), context.Canceled)
	cancelTaken()
	unblock()
	require.NoError(t, testkit.Recv(t, committed, "the commit never returned"))
	require.NoError(t, testkit.Recv(t, recorded, "the taken record never returned"), "taken, so written")

	require.NoError(t, s.Ping(context.Background())) // would commit the vote, were it still queued
	snap, err := s.Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, snap.Seen, "the vote whose context ended is not written")
	assert.Len(t, snap.Expiries, 1, "the taken record is written")
}
