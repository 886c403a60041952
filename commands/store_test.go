package commands_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
)

const (
	hashA = "0000000000000000000000000000000000000000000000000000000000000001"
	hashB = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
)

func TestHashStores(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) commands.HashStore{
		"memory":      func(*testing.T) commands.HashStore { return commands.NewMemoryHashStore() },
		"memory zero": func(*testing.T) commands.HashStore { return &commands.MemoryHashStore{} },
		"file": func(t *testing.T) commands.HashStore {
			return commands.NewFileHashStore(filepath.Join(t.TempDir(), "a", "b", "commands.hash"))
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := mk(t)
			ctx := t.Context()
			h, err := s.LoadHash(ctx)
			require.NoError(t, err)
			require.Empty(t, h)

			require.NoError(t, s.SaveHash(ctx, hashA))
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashA, h)

			require.NoError(t, s.SaveHash(ctx, hashB))
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashB, h)

			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			_, err = s.LoadHash(cancelled)
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, s.SaveHash(cancelled, hashA), context.Canceled)
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashB, h, "a cancelled save changes nothing")

			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hash := hashA
					if i%2 == 1 {
						hash = hashB
					}
					assert.NoError(t, s.SaveHash(context.Background(), hash))
					got, err := s.LoadHash(context.Background())
					assert.NoError(t, err)
					assert.Contains(t, []string{hashA, hashB}, got)
				}()
			}
			wg.Wait()
		})
	}
}

func TestFileHashStoreSurvivesReopenAndLeavesNoTemporaryFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.hash")
	require.NoError(t, commands.NewFileHashStore(path).SaveHash(t.Context(), hashA))
	require.NoError(t, commands.NewFileHashStore(path).SaveHash(t.Context(), hashB))

	h, err := commands.NewFileHashStore(path).LoadHash(t.Context())
	require.NoError(t, err)
	require.Equal(t, hashB, h)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "temporary files left behind")
	if runtime.GOOS != "windows" {
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
}

func TestFileHashStoreRejectsWhatIsNotAHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage":   "not a hash\n",
		"too short": "abcd\n",
		"too long":  strings.Repeat("a", 10_000),
		"not hex":   strings.Repeat("z", 64),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		_, err := commands.NewFileHashStore(path).LoadHash(t.Context())
		require.Error(t, err, name)
	}
	s := commands.NewFileHashStore(filepath.Join(dir, "new"))
	require.Error(t, s.SaveHash(t.Context(), "not a hash"))
	h, err := s.LoadHash(t.Context())
	require.NoError(t, err)
	require.Empty(t, h)
}

func TestFileHashStoreSaveFailsWhenDirectoryCannotBeMade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	err := commands.NewFileHashStore(filepath.Join(blocker, "commands.hash")).SaveHash(t.Context(), hashA)
	require.ErrorContains(t, err, "commands: saving hash")
}
