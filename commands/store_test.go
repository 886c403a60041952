package commands_test

import (
	"context"
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
