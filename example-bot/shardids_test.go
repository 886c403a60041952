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
	for _, bad := range []string{"", "0,,2", "-1", "01", "3-1", "0-3,2-4", "1,1", "0;2", "0-1000000000", "4096"} {
		var got shardIDs
		assert.Error(t, got.EnvDecode(bad), bad)
	}
}
