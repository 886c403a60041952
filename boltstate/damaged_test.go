package boltstate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// goodStoreFile writes a store with some history and returns its bytes.
func goodStoreFile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for i := range 400 {
		tv := topgg.Vote{UserID: userID(i), PlatformID: platformID(i), Weight: 1, CreatedAt: now.Add(time.Duration(i) * time.Second)}
		tv.ExpiresAt = tv.CreatedAt.Add(voterewards.VoteLifetime)
		votes = append(votes, voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory})
	}
	ctx := context.Background()
	_, err = s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c", LastSeen: now}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	for _, v := range votes[:200] {
		require.NoError(t, s.Delivered(ctx, v, true))
	}
	require.NoError(t, s.Close())
	b, err := os.ReadFile(filepath.Join(dir, boltstate.StoreFile))
	require.NoError(t, err)
	return b
}

// openDamaged writes b as the store file and opens it: it must either open
// (and then load without a crash) or fail with a *DamagedError naming
// the file. It reports whether it was refused.
func openDamaged(t *testing.T, b []byte) bool {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, boltstate.StoreFile)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	if d := os.Getenv("DAMAGED_DUMP"); d != "" {
		_ = os.WriteFile(d, b, 0o600)
	}
	s, err := boltstate.Open(dir)
	if err != nil {
		var derr *boltstate.DamagedError
		require.ErrorAs(t, err, &derr, "any refusal is a DamagedError: %v", err)
		assert.Equal(t, path, derr.Path)
		assert.Contains(t, err.Error(), path, "the error names the file")
		assert.Contains(t, err.Error(), "move the file aside", "and says what to do")
		return true
	}
	defer s.Close()
	// A file that passed the check is read whole without a crash; a record
	// it cannot decode is an error, not a panic.
	_, _ = s.Load(context.Background())
	_, _ = s.Stats(context.Background(), platformID(7))
	_, _ = s.Leaderboard(context.Background(), time.Time{}, voterewards.MaxLeaderboard)
	_, _ = s.Leaderboard(context.Background(), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), voterewards.MaxLeaderboard)
	return false
}

func TestDamagedFileIsAnErrorNotACrash(t *testing.T) {
	t.Parallel()
	good := goodStoreFile(t)
	require.Greater(t, len(good), 4*4096)
	require.False(t, openDamaged(t, good), "the good file opens")

	t.Run("truncated", func(t *testing.T) {
		// bbolt grows its file ahead of use: cutting the unused tail is no
		// damage, so only cuts into the used half must be refused.
		for _, n := range []int{1, 15, 100, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096, len(good) / 3, len(good) / 2} {
			assert.True(t, openDamaged(t, good[:n]), "truncated to %d of %d bytes", n, len(good))
		}
		for _, n := range []int{len(good) - 4096, len(good) - 1} {
			openDamaged(t, good[:n]) // refused or opened: never a crash
		}
	})
	t.Run("zero-length", func(t *testing.T) {
		// An empty file is what a crash right after creating it leaves:
		// bbolt initialises it.
		assert.False(t, openDamaged(t, nil))
	})
	t.Run("garbage", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{10, 4096, 8192, 64 << 10} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			assert.True(t, openDamaged(t, b), "%d random bytes", n)
		}
	})
	t.Run("flipped", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 300 {
			b := append([]byte(nil), good...)
			for range 1 + r.IntN(8) {
				i := r.IntN(len(b))
				b[i] ^= byte(1 + r.IntN(255))
			}
			openDamaged(t, b) // refused or opened: never a crash
		}
		// Both meta pages broken: nothing to trust.
		b := append([]byte(nil), good...)
		b[16+20] ^= 0xff
		b[4096+16+20] ^= 0xff
		assert.True(t, openDamaged(t, b))
	})
	t.Run("zeroed pages", func(t *testing.T) {
		for page := 2; page*4096 < len(good); page++ {
			b := append([]byte(nil), good...)
			clear(b[page*4096 : (page+1)*4096])
			openDamaged(t, b)
		}
	})
}

func TestDamagedErrorMatches(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("wrapped: %w", &boltstate.DamagedError{Path: "/x/voterewards.db", Reason: "r"})
	var derr *boltstate.DamagedError
	require.ErrorAs(t, err, &derr)
	assert.Equal(t, "/x/voterewards.db", derr.Path)
}
