package voterewards_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(*testing.T) voterewards.State { return voterewards.NewMemoryStore() })
}

// TestMemoryStoreRefusesAFence: memory is one process's; a fleet's fence is
// refused, and none is fine.
func TestMemoryStoreRefusesAFence(t *testing.T) {
	t.Parallel()
	s := voterewards.NewMemoryStore()
	require.NoError(t, s.UseFence(nil))
	require.ErrorIs(t, s.UseFence(func() int64 { return 1 }), voterewards.ErrNotShared)
}
