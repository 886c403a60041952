package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
)

func TestFleetConstructionAndMisuse(t *testing.T) {
	t.Parallel()
	_, err := fleet.New(nil, fleet.Config{Bot: "b", ShardCount: 1})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = fleet.Open("http://:hunter2@127.0.0.1:1", fleet.Config{Bot: "b", ShardCount: 1})
	require.ErrorIs(t, err, fleet.ErrInvalidURL)
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = fleet.Open("redis://127.0.0.1:1", fleet.Config{Bot: "", ShardCount: 1})
	require.ErrorIs(t, err, fleet.ErrBadBot)
	_, err = fleet.Open("redis://127.0.0.1:1", fleet.Config{Bot: "b"})
	require.ErrorIs(t, err, fleet.ErrBadConfig)

	f, err := fleet.Open("redis://:hunter2@127.0.0.1:1/0", fleet.Config{Bot: "b", ShardCount: 6})
	require.NoError(t, err)
	assert.Equal(t, 6, f.ShardCount())
	assert.NotNil(t, f.Lease())
	assert.NotNil(t, f.Counts())
	assert.NotNil(t, f.HashStore())
	assert.NotNil(t, f.VoteStore())
	_, err = f.Source(nil)
	require.ErrorIs(t, err, fleet.ErrBadConfig)
	require.NoError(t, f.Close())

	var nilFleet *fleet.Fleet
	assert.Nil(t, nilFleet.Lease())
	assert.Zero(t, nilFleet.ShardCount())
	_, err = nilFleet.Reporter(nil)
	require.ErrorIs(t, err, topgg.ErrNotConfigured)
	require.NoError(t, nilFleet.Close())
}
