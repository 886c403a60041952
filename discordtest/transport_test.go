package discordtest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
