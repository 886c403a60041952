package voterewards

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/topgg"
)

// A change that panics inside the shared write transaction must neither take
// the other changes down nor leave the store unable to write.
func TestBoltStoreWritesAfterAPanickingChange(t *testing.T) {
	t.Parallel()
	s, err := openStore(t.TempDir(), storeOptions{noSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	v := newVote(topgg.Vote{UserID: "1", CreatedAt: now, ExpiresAt: now.Add(VoteLifetime)})
	_, err = s.Ingest(ctx, &Checkpoint{LastSeen: now}, []Vote{v}, DefaultStreakGrace)
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
