package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
)

// TestCommandHash: no hash saved reads as ""; SaveHash replaces it, and
// another process's Store on the database reads the last one saved.
func TestCommandHash(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	hash, err := s.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, hash)
	require.NoError(t, s.SaveHash(ctx, "first"))
	require.NoError(t, s.SaveHash(ctx, "second"))
	other, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	hash, err = other.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, "second", hash)
}
