package boltstate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

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
		s.ingest.submit(s.db, &ingestReq{write: func(*bolt.Tx) error { panic("boom") }}, true)
	}()
	select {
	case r := <-panicked:
		assert.Equal(t, "boom", r, "the panic reaches its caller")
	case <-time.After(5 * time.Second):
		t.Fatal("the panicking change never returned")
	}

	done := make(chan error, 1)
	go func() { done <- s.Delivered(ctx, v, true) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the store hangs after a panic in a change")
	}
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
	}, 5*time.Second, time.Millisecond, "the record is queued")
	_, err = s.Ingest(ctx, nil, []voterewards.Vote{next}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	select {
	case err := <-recorded:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the record did not ride in the vote's commit")
	}
	assert.Equal(t, before+1, commits(), "one commit for the record and the vote")
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, next.Key(), snap.Pending[0].Key())
}
