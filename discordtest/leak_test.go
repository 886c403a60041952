package discordtest_test

import (
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/discordtest"
)

// TestCloseLeavesNoGoroutine is not parallel: parallel tests are parked
// while it runs, so IgnoreCurrent sees only goroutines that existed before.
// No discordgo goroutine needs ignoring once its session is closed before
// the Server (heartbeat and listen stop on Close; handler goroutines end).
func TestCloseLeavesNoGoroutine(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) }) // runs last
	const shards = 2
	guild := discordtest.GuildIDForShard(0, 1, shards)
	srv, err := discordtest.NewServer(discordtest.WithShardCount(shards), discordtest.WithGuilds(guild),
		discordtest.WithHeartbeatInterval(400*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx := testContext(t)

	var sessions []*discordgo.Session
	for shard := range shards {
		s, err := srv.NewSession(shard, shards)
		require.NoError(t, err)
		s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
			assert.NoError(t, s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
				Type: discordgo.InteractionResponseChannelMessageWithSource,
				Data: &discordgo.InteractionResponseData{Content: "ok"},
			}))
		})
		require.NoError(t, s.Open())
		sessions = append(sessions, s)
	}
	_, err = sessions[0].ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	require.NoError(t, srv.WaitConnected(ctx, shards))
	require.NoError(t, srv.Join(ctx, discordtest.GuildIDForShard(1, 0, shards)))
	require.NoError(t, srv.Outage(ctx, guild))
	require.NoError(t, srv.Restore(ctx, guild))
	id, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: "42"})
	require.NoError(t, err)
	_, err = srv.WaitInteractionReply(ctx, id)
	require.NoError(t, err)

	// A raw connection left open is closed by the Server.
	c := dialRaw(t, srv, "")
	readFrame(t, c)

	closeAll(t, sessions...)
	srv.Close()
	srv.Close() // idempotent
	assert.ErrorIs(t, srv.Join(ctx, discordtest.GuildIDForShard(2, 0, shards)), discordtest.ErrClosed)
}
