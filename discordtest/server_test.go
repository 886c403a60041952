package discordtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/discordtest"
)

func TestTransportRewritesDiscordHostsOnly(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	client := srv.Client()
	get := func(url string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		return client.Do(req)
	}

	for _, url := range []string{
		"https://discord.com/api/v9/gateway",
		"https://DiscordApp.com/api/v9/gateway",
		srv.APIBase() + "gateway",
		srv.URL + "/api/v10/gateway",
	} {
		resp, err := get(url)
		require.NoError(t, err, url)
		var body struct{ URL string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		_ = resp.Body.Close()
		assert.Equal(t, srv.GatewayURL(), body.URL, url)
	}
	resp, err := get("https://cdn.discordapp.com/avatars/1/2.png")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	for _, url := range []string{"https://example.com/", "https://discord.com.evil.example/", "http://127.0.0.1:1/"} {
		_, err := get(url)
		assert.ErrorContains(t, err, "discordtest: refusing", url)
	}
	_, _, err = srv.Dialer().Dial("ws://127.0.0.1:1/gateway/", nil)
	assert.ErrorContains(t, err, "discordtest: refusing")
	assert.Len(t, srv.Requests(), 5)
}

func TestNewServerRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]discordtest.Option{
		"zero shards":    discordtest.WithShardCount(0),
		"bad guild":      discordtest.WithGuilds("1", "guild"),
		"bad bot id":     discordtest.WithBotUser("bot", "name"),
		"empty bot name": discordtest.WithBotUser("1", ""),
		"bad app id":     discordtest.WithApplicationID(""),
		"empty token":    discordtest.WithToken(""),
		"spaced token":   discordtest.WithToken("secret value"),
		"zero heartbeat": discordtest.WithHeartbeatInterval(0),
	} {
		srv, err := discordtest.NewServer(opt)
		assert.Error(t, err, name)
		assert.Nil(t, srv, name)
		if err != nil {
			assert.NotContains(t, err.Error(), "secret", "a token never appears in errors")
		}
	}
}

func TestNewSessionRejectsBadShard(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, shard := range [][2]int{{0, 0}, {1, 1}, {-1, 2}} {
		_, err := srv.NewSession(shard[0], shard[1])
		assert.Error(t, err, "%v", shard)
	}
	s, err := srv.NewSession(1, 3)
	require.NoError(t, err)
	assert.Equal(t, &[2]int{1, 3}, s.Identify.Shard)
	assert.Equal(t, "Bot "+discordtest.DefaultToken, s.Token)
	assert.False(t, s.ShouldReconnectOnError)
}

func TestGuildIDForShardLandsOnItsShard(t *testing.T) {
	t.Parallel()
	for count := 1; count <= 16; count++ {
		seen := map[string]bool{}
		for shard := range count {
			for n := range 40 {
				id := discordtest.GuildIDForShard(n, shard, count)
				got, err := discordtest.ShardForGuild(id, count)
				require.NoError(t, err)
				require.Equal(t, shard, got, "GuildIDForShard(%d, %d, %d) = %s", n, shard, count, id)
				require.False(t, seen[id], "duplicate %s", id)
				seen[id] = true
				require.Equal(t, id, discordtest.GuildIDForShard(n, shard, count), "stable")
			}
		}
	}
}

func TestShardForGuildMatchesDiscordFormula(t *testing.T) {
	t.Parallel()
	// Discord's documented example: guild 41771983423143937 on 2 shards.
	const id uint64 = 41771983423143937
	for _, count := range []int{1, 2, 3, 7, 16} {
		got, err := discordtest.ShardForGuild(strconv.FormatUint(id, 10), count)
		require.NoError(t, err)
		assert.Equal(t, int((id>>22)%uint64(count)), got)
	}
}

func TestShardForGuildRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "abc", "-1", "+1", "01", "18446744073709551616"} {
		_, err := discordtest.ShardForGuild(id, 2)
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, "%q", id)
	}
	_, err := discordtest.ShardForGuild("1", 0)
	assert.Error(t, err)
}

// TestGuildIDForShardMistakes: a mistake gives an ID that every use
// refuses, without a panic.
func TestGuildIDForShardMistakes(t *testing.T) {
	t.Parallel()
	for _, args := range [][3]int{{-1, 0, 1}, {0, 1, 1}, {0, -1, 2}, {0, 0, 0}, {1 << 50, 0, 1}} {
		id := discordtest.GuildIDForShard(args[0], args[1], args[2])
		_, err := discordtest.ShardForGuild(id, 2)
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, fmt.Sprint(args))
		_, err = discordtest.NewServer(discordtest.WithGuilds(id))
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, fmt.Sprint(args))
	}
}

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
