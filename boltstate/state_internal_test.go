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
	s, err := open(t.TempDir(), options{noSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	v := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
	_, err = s.Ingest(ctx, &voterewards.Checkpoint{LastSeen: now}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = s.db.Batch(func(*bolt.Tx) error { panic("boom") })
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
