package boltstate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// StoreFile is the name of the bbolt file Open keeps in its directory, for
// the tests that damage it.
const StoreFile = storeFile

// newVote makes a history vote of v, its times in UTC without monotonic
// readings, as voterewards' sanitize leaves them.
func newVote(v topgg.Vote) voterewards.Vote {
	v.CreatedAt = v.CreatedAt.UTC().Round(0)
	v.ExpiresAt = v.ExpiresAt.UTC().Round(0)
	return voterewards.Vote{Vote: v, Origin: voterewards.OriginHistory}
}

// openNoSync opens a State in a new directory, its commits without fsync
// (bbolt's NoSync), closed at cleanup.
func openNoSync(tb testing.TB) *State {
	s, err := Open(tb.TempDir())
	require.NoError(tb, err)
	s.db.NoSync = true
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
