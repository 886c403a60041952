package shards_test

import (
	"fmt"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/shards"
)

// parseIDs decodes s as a SHARD_IDS variable.
func parseIDs(s string) (shards.IDs, error) {
	var ids shards.IDs
	err := ids.EnvDecode(s)
	return ids, err
}

// TestParseIDs: IDs and ranges in any order come back sorted, empty is nil
// (every shard), and each malformed list is refused (a huge range without
// allocating for it).
func TestParseIDs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]shards.IDs{
		"0-3": {0, 1, 2, 3}, "0,2,4": {0, 2, 4}, "4-5, 0-1": {0, 1, 4, 5}, "7": {7}, "3-3": {3}, "65535": {65535},
	} {
		got, err := parseIDs(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	got, err := parseIDs("")
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, bad := range []string{" ", "0,,2", "-1", "01", "3-1", "0-3,2-4", "1,1", "0;2", "0-1000000000", "65536", "+1", "1-"} {
		_, err := parseIDs(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "0-3,5,7-8", shards.IDs{0, 1, 2, 3, 5, 7, 8}.String())
	assert.Empty(t, shards.IDs(nil).String())
}

// TestIDsEnvDecode: go-envconfig decodes a SHARD_IDS variable into IDs, an
// unset one leaves nil (every shard), and a bad one fails naming the field.
func TestIDsEnvDecode(t *testing.T) {
	t.Parallel()
	type cfg struct {
		ShardIDs shards.IDs `env:"SHARD_IDS"`
	}
	var c cfg
	require.NoError(t, envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c,
		Lookuper: envconfig.MapLookuper(map[string]string{"SHARD_IDS": "2-3,0"})}))
	assert.Equal(t, shards.IDs{0, 2, 3}, c.ShardIDs)

	c = cfg{}
	require.NoError(t, envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c, Lookuper: envconfig.MapLookuper(nil)}))
	assert.Nil(t, c.ShardIDs)

	err := envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c,
		Lookuper: envconfig.MapLookuper(map[string]string{"SHARD_IDS": "3-1"})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ShardIDs")
	assert.Contains(t, err.Error(), "ends before it starts")
}

// TestIDsOption: parsed IDs make a Group of those shards only; nil IDs keep
// every shard.
func TestIDsOption(t *testing.T) {
	t.Parallel()
	ids, err := parseIDs("1,3")
	require.NoError(t, err)
	g, err := shards.New("token", 4, shards.WithShardIDs(ids...))
	require.NoError(t, err)
	assert.Equal(t, "shards.Group{shard count: 4, shards: [1 3]}", fmt.Sprint(g))
	g, err = shards.New("token", 2, shards.WithShardIDs(shards.IDs(nil)...))
	require.NoError(t, err)
	assert.Equal(t, "shards.Group{shard count: 2, shards: [0 1]}", fmt.Sprint(g))
	_, err = shards.New("token", 2, shards.WithShardIDs(ids...))
	requireInvalid(t, err, "shard ids") // shard 3 of 2
}
