package fleet

// Findings of the hostile review (review-attack): each test failed on the
// code it names before its fix.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
)

// TestReviewRedisStatsOfNoUser: Stats(ctx, "") is misuse (the memory and
// bolt stores return an error wrapping topgg.ErrNilArgument); the Redis
// store answers a zero Stats.
func TestReviewRedisStatsOfNoUser(t *testing.T) {
	t.Parallel()
	s, _ := leadingStore(t, redistest.Start(t), "review-nouser")
	_, err := s.Stats(context.Background(), "")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
}
