package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func TestFleetConstructionAndMisuse(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Config{Bot: "b", ShardCount: 1})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = Open("http://:hunter2@127.0.0.1:1", Config{Bot: "b", ShardCount: 1})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = Open("redis://127.0.0.1:1", Config{Bot: "", ShardCount: 1})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = Open("redis://127.0.0.1:1", Config{Bot: "b"})
	require.ErrorAs(t, err, new(*topgg.ConfigError))

	f, err := Open("redis://:hunter2@127.0.0.1:1/0", Config{Bot: "b", ShardCount: 6, OnChange: func(LeaseState) {}})
	require.NoError(t, err)
	assert.Equal(t, 6, f.counts.shardCount)
	assert.NotNil(t, f.lease.onChange, "Config.OnChange is the lease's hook")
	assert.NotNil(t, f.Lease())
	_, _, err = f.Counts(nil)
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	require.NoError(t, f.Close())

}

// TestFleetLeaseTTLIsBounded: Config.LeaseTTL is refused outside
// [MinLeaseTTL, MaxLeaseTTL], naming the field and the bounds; zero is the
// default and the bounds themselves are accepted.
func TestFleetLeaseTTLIsBounded(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{-time.Second, 100 * time.Millisecond, MinLeaseTTL - time.Nanosecond, MaxLeaseTTL + time.Nanosecond, time.Hour} {
		f, err := Open("redis://127.0.0.1:1", Config{Bot: "b", ShardCount: 1, LeaseTTL: ttl})
		require.ErrorAs(t, err, new(*topgg.ConfigError), ttl)
		assert.Nil(t, f)
		assert.ErrorContains(t, err, "LeaseTTL")
		assert.ErrorContains(t, err, "between 1s and 10m0s")
	}
	for _, ttl := range []time.Duration{0, MinLeaseTTL, MaxLeaseTTL} {
		f, err := Open("redis://127.0.0.1:1", Config{Bot: "b", ShardCount: 1, LeaseTTL: ttl})
		require.NoError(t, err, ttl)
		require.NoError(t, f.Close())
	}
	assert.Equal(t, time.Second, MinLeaseTTL)
	assert.Equal(t, 10*time.Minute, MaxLeaseTTL)
}
