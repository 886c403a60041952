package discordtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/discordtest"
)

func TestOpenOneShardGetsReadyAndGuildCreates(t *testing.T) {
	t.Parallel()
	ids := []string{
		discordtest.GuildIDForShard(0, 0, 1),
		discordtest.GuildIDForShard(1, 0, 1),
		discordtest.GuildIDForShard(2, 0, 1),
	}
	srv := newServer(t, discordtest.WithGuilds(ids...))
	_, rec := openSession(t, srv, 0, 1, true)

	assert.ElementsMatch(t, creates(ids...), rec.waitLog(3))
	readies := rec.readyInfos()
	require.Len(t, readies, 1)
	r := readies[0]
	assert.Equal(t, 9, r.version, "READY echoes the gateway version discordgo asked for")
	assert.NotEmpty(t, r.sessionID)
	assert.Equal(t, srv.BotUserID(), r.userID)
	assert.Equal(t, srv.ApplicationID(), r.appID)
	assert.Equal(t, [2]int{0, 1}, r.shard)
	assert.Equal(t, ids, r.stubs)
	assert.True(t, r.allStubs, "READY lists guilds as unavailable stubs")
	// The server marks the shard ready once it has written READY and the
	// GUILD_CREATEs, which the session may read first: wait for the mark.
	require.NoError(t, srv.WaitConnected(testContext(t), 1))
	assert.Equal(t, 1, srv.ConnectedShards())
	assert.Eventually(t, func() bool { return srv.Heartbeats() >= 1 }, waitFor, 5*time.Millisecond,
		"discordgo heartbeats as soon as it is connected")
}

func TestHeartbeatsAreAcknowledged(t *testing.T) {
	t.Parallel()
	// discordgo drops the connection when the last ACK is more than five
	// intervals old; seven heartbeats (six intervals) without a Disconnect
	// prove the ACKs arrive. The interval leaves room for -race on a busy
	// machine, where a 100ms interval was seen to miss its 500ms budget.
	srv := newServer(t, discordtest.WithHeartbeatInterval(400*time.Millisecond))
	_, rec := openSession(t, srv, 0, 1, true)
	require.Eventually(t, func() bool { return srv.Heartbeats() >= 7 }, waitFor, 10*time.Millisecond)
	assert.Zero(t, rec.disconnectCount())
	assert.Equal(t, 1, rec.connectCount())
	assert.Len(t, rec.readyInfos(), 1)
}

func TestThreeShardsEachGetTheirOwnGuilds(t *testing.T) {
	t.Parallel()
	const shards = 3
	var all []string
	for shard := range shards {
		all = append(all, discordtest.GuildIDForShard(0, shard, shards), discordtest.GuildIDForShard(1, shard, shards))
	}
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(all...))

	// SyncEvents off, as in a real bot: handlers run in their own
	// goroutines and count under a mutex.
	var mu sync.Mutex
	got := map[int][]string{}
	shardOf := map[int][2]int{}
	var sessions []*discordgo.Session
	t.Cleanup(func() { closeAll(t, sessions...) })
	for shard := range shards {
		s, err := srv.NewSession(shard, shards)
		require.NoError(t, err)
		s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) {
			mu.Lock()
			defer mu.Unlock()
			got[shard] = append(got[shard], e.ID)
		})
		s.AddHandler(func(_ *discordgo.Session, e *discordgo.Ready) {
			mu.Lock()
			defer mu.Unlock()
			if assert.NotNil(t, e.Shard) {
				shardOf[shard] = *e.Shard
			}
		})
		require.NoError(t, s.Open())
		sessions = append(sessions, s)
	}
	require.NoError(t, srv.WaitConnected(testContext(t), shards))
	assert.Equal(t, shards, srv.ConnectedShards())

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[0])+len(got[1])+len(got[2]) == len(all)
	}, waitFor, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for shard := range shards {
		assert.ElementsMatch(t, []string{all[2*shard], all[2*shard+1]}, got[shard], "shard %d", shard)
		assert.Equal(t, [2]int{shard, shards}, shardOf[shard])
	}
}

func TestSequenceNumbersIncrease(t *testing.T) {
	t.Parallel()
	g0 := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0))
	_, rec := openSession(t, srv, 0, 1, true)
	rec.waitLog(1)
	require.NoError(t, srv.Join(testContext(t), discordtest.GuildIDForShard(1, 0, 1)))
	rec.waitLog(2)
	assert.Equal(t, []int64{1, 2, 3}, rec.sequences(), "READY, GUILD_CREATE, GUILD_CREATE")
}

func TestIdentifyDuringOutageSendsNoGuildCreate(t *testing.T) {
	t.Parallel()
	g0, g1, g2 := discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1), discordtest.GuildIDForShard(2, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0, g1))
	_, first := openSession(t, srv, 0, 1, true)
	first.waitLog(2)
	ctx := testContext(t)
	require.NoError(t, srv.Outage(ctx, g1))
	first.waitLog(3)

	// A second session of the same shard takes its events over.
	_, second := openSession(t, srv, 0, 1, true)
	require.NoError(t, srv.Join(ctx, g2)) // a barrier: everything before it has arrived
	assert.Equal(t, creates(g0, g2), second.waitLog(2))
	require.Len(t, second.readyInfos(), 1)
	assert.Equal(t, []string{g0, g1}, second.readyInfos()[0].stubs, "the guild in an outage is still in READY")
	assert.Len(t, first.snapshot(), 3, "the first session no longer gets the shard's events")
}

func TestCloseClientConnectionsResumes(t *testing.T) {
	t.Parallel()
	g0, g1 := discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0))
	_, rec := openSession(t, srv, 0, 1, true, func(s *discordgo.Session) { s.ShouldReconnectOnError = true })
	rec.waitLog(1)
	require.Eventually(t, func() bool { return srv.Heartbeats() >= 1 }, waitFor, 5*time.Millisecond)

	srv.CloseClientConnections()
	assert.Equal(t, []string{"create:" + g0, "resumed"}, rec.waitLog(2))
	require.NoError(t, srv.WaitConnected(testContext(t), 1))
	require.NoError(t, srv.Join(testContext(t), g1))
	assert.Equal(t, []string{"create:" + g0, "resumed", "create:" + g1}, rec.waitLog(3))
	assert.Len(t, rec.readyInfos(), 1, "a resumed session gets no second READY")
	assert.Equal(t, []int64{1, 2, 3, 4}, rec.sequences(), "the sequence goes on across the resume")
	assert.Equal(t, 2, rec.connectCount())
	assert.Equal(t, 1, rec.disconnectCount())
	// See NewSession: Close must not race the new connection's first
	// heartbeat, or discordgo reconnects after Close.
	require.Eventually(t, func() bool { return srv.Heartbeats() >= 2 }, waitFor, 5*time.Millisecond)
}

func TestDiscordgoOpenWithWrongTokenFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s, err := srv.NewSession(0, 1)
	require.NoError(t, err)
	s.Token, s.Identify.Token = "Bot wrong", "Bot wrong"
	err = s.Open()
	var closeErr *websocket.CloseError
	require.ErrorAs(t, err, &closeErr)
	assert.Equal(t, 4004, closeErr.Code)
	assert.Zero(t, srv.ConnectedShards())
}

// rawFrame is a gateway payload as a test reads it.
type rawFrame struct {
	Op int             `json:"op"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
	D  json.RawMessage `json:"d"`
}

func dialRaw(t *testing.T, srv *discordtest.Server, query string) *websocket.Conn {
	t.Helper()
	c, resp, err := srv.Dialer().Dial(srv.GatewayURL()+query, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func readFrame(t *testing.T, c *websocket.Conn) rawFrame {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(waitFor)))
	var f rawFrame
	require.NoError(t, c.ReadJSON(&f))
	return f
}

func sendFrame(t *testing.T, c *websocket.Conn, op int, d any) {
	t.Helper()
	require.NoError(t, c.WriteJSON(map[string]any{"op": op, "d": d}))
}

func identifyData(token string, shard *[2]int) map[string]any {
	d := map[string]any{"token": token, "intents": 1, "properties": map[string]string{"os": "linux"}}
	if shard != nil {
		d["shard"] = shard
	}
	return d
}

// readClose reads until the server closes and returns the close code.
func readClose(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(waitFor)))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var closeErr *websocket.CloseError
		require.ErrorAs(t, err, &closeErr)
		return closeErr.Code
	}
}

func TestGatewayHelloAndHeartbeat(t *testing.T) {
	t.Parallel()
	srv := newServer(t, discordtest.WithHeartbeatInterval(1500*time.Millisecond))
	c := dialRaw(t, srv, "?v=10&encoding=json")
	hello := readFrame(t, c)
	assert.Equal(t, 10, hello.Op)
	assert.Nil(t, hello.S)
	assert.Nil(t, hello.T)
	var h struct {
		Interval int `json:"heartbeat_interval"`
	}
	require.NoError(t, json.Unmarshal(hello.D, &h))
	assert.Equal(t, 1500, h.Interval)

	sendFrame(t, c, 1, nil)
	assert.Equal(t, 11, readFrame(t, c).Op)
	assert.Equal(t, 1, srv.Heartbeats())
}

func TestGatewayRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		send  func(t *testing.T, c *websocket.Conn)
		code  int
	}{
		{"wrong token", "", func(t *testing.T, c *websocket.Conn) {
			sendFrame(t, c, 2, identifyData("Bot wrong", &[2]int{0, 2}))
		}, 4004},
		{"sharding required", "", func(t *testing.T, c *websocket.Conn) {
			sendFrame(t, c, 2, identifyData("Bot "+discordtest.DefaultToken, nil))
		}, 4011},
		{"shard id out of range", "", func(t *testing.T, c *websocket.Conn) {
			sendFrame(t, c, 2, identifyData("Bot "+discordtest.DefaultToken, &[2]int{2, 2}))
		}, 4010},
		{"other shard count", "", func(t *testing.T, c *websocket.Conn) {
			sendFrame(t, c, 2, identifyData("Bot "+discordtest.DefaultToken, &[2]int{0, 3}))
		}, 4010},
		{"unknown opcode", "", func(t *testing.T, c *websocket.Conn) { sendFrame(t, c, 42, nil) }, 4001},
		{"not authenticated", "", func(t *testing.T, c *websocket.Conn) { sendFrame(t, c, 8, map[string]any{}) }, 4003},
		{"decode error", "", func(t *testing.T, c *websocket.Conn) {
			require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte("not json")))
		}, 4002},
		{"already authenticated", "", func(t *testing.T, c *websocket.Conn) {
			sendFrame(t, c, 2, identifyData(discordtest.DefaultToken, &[2]int{1, 2}))
			assert.Equal(t, "READY", *readFrame(t, c).T)
			sendFrame(t, c, 2, identifyData(discordtest.DefaultToken, &[2]int{1, 2}))
		}, 4005},
		{"api version", "?v=6&encoding=json", func(*testing.T, *websocket.Conn) {}, 4012},
	}
	srv := newServer(t, discordtest.WithShardCount(2))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, srv, tt.query)
			if tt.query == "" {
				assert.Equal(t, 10, readFrame(t, c).Op)
			}
			tt.send(t, c)
			assert.Equal(t, tt.code, readClose(t, c))
		})
	}
}

func TestGatewayResumeReplaysMissedEvents(t *testing.T) {
	t.Parallel()
	g0, g1, g2 := discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1), discordtest.GuildIDForShard(2, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0))
	ctx := testContext(t)

	a := dialRaw(t, srv, "?v=10&encoding=json")
	readFrame(t, a) // HELLO
	sendFrame(t, a, 2, identifyData(discordtest.DefaultToken, nil))
	ready := readFrame(t, a)
	require.Equal(t, "READY", *ready.T)
	var r struct {
		SessionID string `json:"session_id"`
		ResumeURL string `json:"resume_gateway_url"`
	}
	require.NoError(t, json.Unmarshal(ready.D, &r))
	assert.Equal(t, srv.GatewayURL(), r.ResumeURL)
	assert.Equal(t, "GUILD_CREATE", *readFrame(t, a).T)
	require.NoError(t, srv.Join(ctx, g1))
	joined := readFrame(t, a)
	require.Equal(t, int64(3), *joined.S)

	// The client saw only READY (s=1): a resume replays s=2 and s=3.
	b := dialRaw(t, srv, "?v=10&encoding=json")
	readFrame(t, b)
	sendFrame(t, b, 6, map[string]any{"token": "Bot " + discordtest.DefaultToken, "session_id": r.SessionID, "seq": 1})
	for _, want := range []struct {
		seq int64
		typ string
	}{{2, "GUILD_CREATE"}, {3, "GUILD_CREATE"}, {4, "RESUMED"}} {
		f := readFrame(t, b)
		assert.Equal(t, 0, f.Op)
		assert.Equal(t, want.seq, *f.S)
		assert.Equal(t, want.typ, *f.T)
	}
	require.NoError(t, srv.Join(ctx, g2))
	f := readFrame(t, b)
	assert.Equal(t, int64(5), *f.S)
	assert.Contains(t, string(f.D), g2)

	// The old connection was closed by the resume.
	require.NoError(t, a.SetReadDeadline(time.Now().Add(waitFor)))
	_, _, err := a.ReadMessage()
	require.Error(t, err)

	// An unknown session is invalid; the client may identify on the same
	// connection.
	c := dialRaw(t, srv, "")
	readFrame(t, c)
	sendFrame(t, c, 6, map[string]any{"token": discordtest.DefaultToken, "session_id": "nope", "seq": 3})
	invalid := readFrame(t, c)
	assert.Equal(t, 9, invalid.Op)
	assert.JSONEq(t, "false", string(invalid.D))
	sendFrame(t, c, 2, identifyData(discordtest.DefaultToken, nil))
	assert.Equal(t, "READY", *readFrame(t, c).T)
}

func TestConnectedShardsDropsOnDisconnect(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := dialRaw(t, srv, "")
	readFrame(t, c)
	sendFrame(t, c, 2, identifyData(discordtest.DefaultToken, nil))
	readFrame(t, c)
	require.NoError(t, srv.WaitConnected(testContext(t), 1))
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return srv.ConnectedShards() == 0 }, waitFor, 5*time.Millisecond)
	err := srv.Join(testContext(t), discordtest.GuildIDForShard(0, 0, 1))
	assert.ErrorIs(t, err, discordtest.ErrShardNotConnected)
	assert.Empty(t, srv.GuildIDs(), "a refused Join changes nothing")
}

func TestWaitConnectedHonoursContextAndClose(t *testing.T) {
	t.Parallel()
	srv, err := discordtest.NewServer()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, srv.WaitConnected(ctx, 1), context.Canceled)
	go srv.Close()
	assert.True(t, errors.Is(srv.WaitConnected(t.Context(), 1), discordtest.ErrClosed))
}

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
