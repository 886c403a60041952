package discordtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

func TestGuildLifecycleEvents(t *testing.T) {
	t.Parallel()
	const shards = 2
	g0 := discordtest.GuildIDForShard(0, 0, shards)
	joined := discordtest.GuildIDForShard(1, 0, shards)
	otherShard := discordtest.GuildIDForShard(0, 1, shards)
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(g0, otherShard))
	_, rec := openSession(t, srv, 0, shards, true) // shard 1 stays offline
	ctx := testContext(t)
	rec.waitLog(1)

	require.NoError(t, srv.Join(ctx, joined))
	require.NoError(t, srv.Outage(ctx, joined))
	assert.Equal(t, []discordtest.Guild{
		{ID: g0, ShardID: 0},
		{ID: otherShard, ShardID: 1},
		{ID: joined, ShardID: 0, Unavailable: true},
	}, srv.Guilds(), "ordered by ID")
	require.NoError(t, srv.Restore(ctx, joined))
	require.NoError(t, srv.Outage(ctx, g0))
	require.NoError(t, srv.Remove(ctx, g0)) // removed during its outage
	require.NoError(t, srv.Remove(ctx, joined))

	assert.Equal(t, []string{
		"create:" + g0,
		"create:" + joined,
		"outage:" + joined,
		"create:" + joined,
		"outage:" + g0,
		"delete:" + g0,
		"delete:" + joined,
	}, rec.waitLog(7))
	assert.Equal(t, []string{otherShard}, srv.GuildIDs())
}

func TestGuildChangeErrors(t *testing.T) {
	t.Parallel()
	const shards = 2
	g0 := discordtest.GuildIDForShard(0, 0, shards)
	unknown := discordtest.GuildIDForShard(5, 0, shards)
	offline := discordtest.GuildIDForShard(0, 1, shards)
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(g0, offline))
	_, rec := openSession(t, srv, 0, shards, true)
	ctx := testContext(t)
	rec.waitLog(1)

	assert.ErrorIs(t, srv.Join(ctx, g0), discordtest.ErrGuildExists)
	assert.ErrorIs(t, srv.Remove(ctx, unknown), discordtest.ErrUnknownGuild)
	assert.ErrorIs(t, srv.Outage(ctx, unknown), discordtest.ErrUnknownGuild)
	assert.ErrorIs(t, srv.Restore(ctx, unknown), discordtest.ErrUnknownGuild)
	assert.ErrorIs(t, srv.Restore(ctx, g0), discordtest.ErrGuildAvailable)
	require.NoError(t, srv.Outage(ctx, g0))
	assert.ErrorIs(t, srv.Outage(ctx, g0), discordtest.ErrGuildUnavailable)
	assert.ErrorIs(t, srv.Outage(ctx, offline), discordtest.ErrShardNotConnected)
	assert.ErrorIs(t, srv.Join(ctx, "not-a-snowflake"), discordtest.ErrInvalidSnowflake)
	assert.ErrorIs(t, srv.Join(ctx, "0042"), discordtest.ErrInvalidSnowflake)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, srv.Remove(cancelled, g0), context.Canceled)

	// Only the one successful change reached the session.
	require.NoError(t, srv.Restore(ctx, g0)) // barrier
	assert.Equal(t, []string{"create:" + g0, "outage:" + g0, "create:" + g0}, rec.waitLog(3))
	assert.Equal(t, []string{g0, offline}, srv.GuildIDs())
}
