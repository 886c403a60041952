package discordtest_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

// restSession is a session that is never opened: REST only.
func restSession(t *testing.T, srv *discordtest.Server) *discordgo.Session {
	t.Helper()
	s, err := srv.NewSession(0, srv.ShardCount())
	require.NoError(t, err)
	return s
}

func requireRESTError(t *testing.T, err error, status, code int) {
	t.Helper()
	var restErr *discordgo.RESTError
	require.ErrorAs(t, err, &restErr)
	assert.Equal(t, status, restErr.Response.StatusCode)
	if assert.NotNil(t, restErr.Message) {
		assert.Equal(t, code, restErr.Message.Code)
	}
}

func TestRESTUserApplicationAndGateway(t *testing.T) {
	t.Parallel()
	srv := newServer(t,
		discordtest.WithBotUser("2000000000000000002", "votebot"),
		discordtest.WithApplicationID("3000000000000000003"),
		discordtest.WithShardCount(4))
	s := restSession(t, srv)

	me, err := s.User("@me")
	require.NoError(t, err)
	assert.Equal(t, "2000000000000000002", me.ID)
	assert.Equal(t, "votebot", me.Username)
	assert.True(t, me.Bot)

	app, err := s.Application("@me")
	require.NoError(t, err)
	assert.Equal(t, "3000000000000000003", app.ID)

	gw, err := s.GatewayBot()
	require.NoError(t, err)
	assert.Equal(t, 4, gw.Shards)
	assert.Equal(t, srv.GatewayURL(), gw.URL)

	calls := srv.Requests()
	require.Len(t, calls, 3)
	assert.Equal(t, "GET", calls[0].Method)
	assert.Equal(t, "/api/v9/users/@me", calls[0].Path)
	assert.Equal(t, http.StatusOK, calls[0].Status)
	assert.Equal(t, "[redacted]", calls[0].Header.Get("Authorization"))
	assert.Equal(t, "/api/v9/oauth2/applications/@me", calls[1].Path)
	assert.Equal(t, "/api/v9/gateway/bot", calls[2].Path)
}

func TestRESTWrongTokenIsUnauthorized(t *testing.T) {
	t.Parallel()
	srv := newServer(t, discordtest.WithToken("right-token"))
	s := restSession(t, srv)
	s.Token = "Bot wrong-token"
	_, err := s.User("@me")
	requireRESTError(t, err, http.StatusUnauthorized, 0)

	// GET /gateway is public, as on Discord.
	url, err := s.Gateway()
	require.NoError(t, err)
	assert.Equal(t, srv.GatewayURL(), url)

	calls := srv.Requests()
	require.Len(t, calls, 2)
	assert.Equal(t, http.StatusUnauthorized, calls[0].Status)
	for _, c := range calls {
		assert.NotContains(t, c.Header.Get("Authorization"), "wrong-token")
	}
}

func TestRESTUnknownEndpointIs404AndRecorded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	_, err := s.Channel("123")
	requireRESTError(t, err, http.StatusNotFound, 0)
	var restErr *discordgo.RESTError
	require.True(t, errors.As(err, &restErr))
	assert.Equal(t, "404: Not Found", restErr.Message.Message)

	calls := srv.Requests()
	require.Len(t, calls, 1)
	assert.Equal(t, "/api/v9/channels/123", calls[0].Path)
	assert.Equal(t, http.StatusNotFound, calls[0].Status)

	// An unsupported API version is unknown too; a wrong method is 405.
	client := srv.Client()
	for path, status := range map[string]int{"/api/v6/users/@me": 404, "/api/v10/users/@me": 200} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://discord.com"+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bot "+srv.Token())
		resp, err := client.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, path)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, srv.APIBase()+"users/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+srv.Token())
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.JSONEq(t, `{"message":"405: Method Not Allowed","code":0}`, string(body))
}

func voteCommand(description string) *discordgo.ApplicationCommand {
	return &discordgo.ApplicationCommand{
		Name:        "vote",
		Description: description,
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionBoolean, Name: "remind", Description: "Remind me in 12 hours",
		}},
	}
}

func TestRESTApplicationCommands(t *testing.T) {
	t.Parallel()
	g0 := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0))
	s := restSession(t, srv)
	app := srv.ApplicationID()

	created, err := s.ApplicationCommandBulkOverwrite(app, "", []*discordgo.ApplicationCommand{
		voteCommand("Vote for the bot"),
		{Name: "ping", Description: "Pong"},
	})
	require.NoError(t, err)
	require.Len(t, created, 2)
	for _, c := range created {
		assert.NotEmpty(t, c.ID)
		assert.NotEmpty(t, c.Version)
		assert.Equal(t, app, c.ApplicationID)
		assert.Equal(t, discordgo.ChatApplicationCommand, c.Type)
		assert.Empty(t, c.GuildID)
	}
	assert.NotEqual(t, created[0].ID, created[1].ID)

	listed, err := s.ApplicationCommands(app, "")
	require.NoError(t, err)
	assert.Equal(t, created, listed)
	assert.Equal(t, created, srv.Commands())

	// A new overwrite keeps the ID of a command with the same name.
	again, err := s.ApplicationCommandBulkOverwrite(app, "", []*discordgo.ApplicationCommand{
		voteCommand("Vote for us on Top.gg"),
		{Name: "stats", Description: "Show stats"},
	})
	require.NoError(t, err)
	require.Len(t, again, 2)
	assert.Equal(t, created[0].ID, again[0].ID)
	assert.Equal(t, "Vote for us on Top.gg", again[0].Description)
	assert.NotEqual(t, created[1].ID, again[1].ID)
	assert.Equal(t, []string{"vote", "stats"}, names(srv.Commands()))

	// Guild commands are their own scope.
	guildCmds, err := s.ApplicationCommandBulkOverwrite(app, g0, []*discordgo.ApplicationCommand{{Name: "admin", Description: "Admin"}})
	require.NoError(t, err)
	assert.Equal(t, g0, guildCmds[0].GuildID)
	assert.Equal(t, []string{"admin"}, names(srv.GuildCommands(g0)))
	assert.Equal(t, []string{"vote", "stats"}, names(srv.Commands()))

	// Single create (upsert).
	one, err := s.ApplicationCommandCreate(app, "", &discordgo.ApplicationCommand{Name: "help", Description: "Help"})
	require.NoError(t, err)
	assert.Equal(t, []string{"vote", "stats", "help"}, names(srv.Commands()))
	upd, err := s.ApplicationCommandCreate(app, "", &discordgo.ApplicationCommand{Name: "help", Description: "More help"})
	require.NoError(t, err)
	assert.Equal(t, one.ID, upd.ID)
	assert.Equal(t, []string{"vote", "stats", "help"}, names(srv.Commands()))

	// Another application's commands, or a guild the bot is not in.
	_, err = s.ApplicationCommands("999", "")
	requireRESTError(t, err, http.StatusForbidden, 50001)
	_, err = s.ApplicationCommands(app, discordtest.GuildIDForShard(9, 0, 1))
	requireRESTError(t, err, http.StatusForbidden, 50001)
}

func names(cmds []*discordgo.ApplicationCommand) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Name
	}
	return out
}

func TestRESTMemberRoles(t *testing.T) {
	t.Parallel()
	g0 := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(g0))
	s := restSession(t, srv)
	const user, voter, booster = "4000000000000000004", "5000000000000000005", "6000000000000000006"

	require.NoError(t, s.GuildMemberRoleAdd(g0, user, voter, discordgo.WithAuditLogReason("voted")))
	require.NoError(t, s.GuildMemberRoleAdd(g0, user, booster))
	assert.Equal(t, []string{voter, booster}, srv.MemberRoles(g0, user))
	require.NoError(t, s.GuildMemberRoleRemove(g0, user, voter))
	assert.Equal(t, []string{booster}, srv.MemberRoles(g0, user))
	assert.Empty(t, srv.MemberRoles(g0, "7"))

	assert.Equal(t, []discordtest.RoleChange{
		{GuildID: g0, UserID: user, RoleID: voter, Added: true, Reason: "voted"},
		{GuildID: g0, UserID: user, RoleID: booster, Added: true},
		{GuildID: g0, UserID: user, RoleID: voter, Added: false},
	}, srv.RoleChanges())

	err := s.GuildMemberRoleAdd(discordtest.GuildIDForShard(1, 0, 1), user, voter)
	requireRESTError(t, err, http.StatusNotFound, 10004)
	assert.Len(t, srv.RoleChanges(), 3)

	calls := srv.Requests()
	require.NotEmpty(t, calls)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/api/v9/guilds/"+g0+"/members/"+user+"/roles/"+voter, calls[0].Path)
	assert.Equal(t, http.StatusNoContent, calls[0].Status)
}

func TestRESTBodiesAreRecorded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	_, err := s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	calls := srv.Requests()
	require.Len(t, calls, 1)
	var sent []map[string]any
	require.NoError(t, json.Unmarshal(calls[0].Body, &sent))
	require.Len(t, sent, 1)
	assert.Equal(t, "vote", sent[0]["name"])
	assert.Equal(t, "application/json", calls[0].Header.Get("Content-Type"))

	// Calls returns copies.
	calls[0].Body[0] = 'X'
	assert.NotEqual(t, byte('X'), srv.Requests()[0].Body[0])
}
