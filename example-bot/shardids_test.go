package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShardIDsParseAndShow(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]shardIDs{
		"0-3": {0, 1, 2, 3}, "0,2,4": {0, 2, 4}, "4-5, 0-1": {0, 1, 4, 5}, "7": {7}, "3-3": {3},
	} {
		var got shardIDs
		require.NoError(t, got.EnvDecode(in), in)
		assert.Equal(t, want, got, in)
	}
	assert.Equal(t, "0-1,4,6-8", shardIDs{0, 1, 4, 6, 7, 8}.String())
	assert.Empty(t, shardIDs(nil).String())
	assert.Equal(t, shardIDs{0, 1, 2}, config{ShardCount: 3}.runShards())
	assert.Equal(t, shardIDs{2}, config{ShardCount: 3, ShardIDs: shardIDs{2}}.runShards())
}
