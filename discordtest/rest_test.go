package discordtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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

func TestInteractVoteAndReply(t *testing.T) {
	t.Parallel()
	const shards = 2
	guild := discordtest.GuildIDForShard(0, 1, shards) // on shard 1
	const user, voter = "4000000000000000004", "5000000000000000005"
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(guild))
	ctx := testContext(t)

	s, err := srv.NewSession(1, shards)
	require.NoError(t, err)
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	require.NoError(t, s.GuildMemberRoleAdd(guild, user, voter))

	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if !assert.Equal(t, discordgo.InteractionApplicationCommand, i.Type) {
			return
		}
		data := i.ApplicationCommandData()
		assert.Equal(t, "vote", data.Name)
		assert.Equal(t, srv.Commands()[0].ID, data.ID)
		assert.Equal(t, guild, i.GuildID)
		assert.Equal(t, srv.ApplicationID(), i.AppID)
		if assert.NotNil(t, i.Member) && assert.NotNil(t, i.Member.User) {
			assert.Equal(t, user, i.Member.User.ID)
			assert.Equal(t, []string{voter}, i.Member.Roles)
		}
		if assert.Len(t, data.Options, 1) {
			assert.Equal(t, "remind", data.Options[0].Name)
			assert.True(t, data.Options[0].BoolValue())
		}
		assert.NoError(t, s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Thanks <@" + i.Member.User.ID + ">", Flags: discordgo.MessageFlagsEphemeral},
		}))
	})
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	id, token, err := srv.Interact(ctx, discordtest.InteractionSpec{
		Command: "vote", GuildID: guild, UserID: user,
		Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "remind", Type: discordgo.ApplicationCommandOptionBoolean, Value: true},
		},
	})
	require.NoError(t, err)
	assert.NotEmpty(t, id)
	assert.NotEmpty(t, token)

	reply, err := srv.WaitInteractionReply(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, discordgo.InteractionResponseChannelMessageWithSource, reply.Type)
	assert.Equal(t, "Thanks <@"+user+">", reply.Content)
	assert.Equal(t, discordgo.MessageFlagsEphemeral, reply.Flags)
	assert.Contains(t, string(reply.Body), `"content":"Thanks`)

	// A second callback is refused; a wrong token is unknown.
	it := &discordgo.Interaction{ID: id, Token: token, AppID: srv.ApplicationID()}
	again := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "again"}}
	requireRESTError(t, s.InteractionRespond(it, again), http.StatusBadRequest, 40060)
	requireRESTError(t, s.InteractionRespond(&discordgo.Interaction{ID: id, Token: "wrong"}, again), http.StatusNotFound, 10062)
	assert.Equal(t, 1, srv.InteractionReplies())
}

func TestInteractDeferred(t *testing.T) {
	t.Parallel()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(guild))
	s, err := srv.NewSession(0, 1)
	require.NoError(t, err)
	// A guild command, found before the global ones.
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), guild, []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)

	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		assert.NoError(t, s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		}))
	})
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	ctx := testContext(t)
	id, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: "42"})
	require.NoError(t, err)
	first, err := srv.WaitInteractionReply(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, discordgo.InteractionResponseDeferredChannelMessageWithSource, first.Type)
}

func TestInteractInDM(t *testing.T) {
	t.Parallel()
	const shards = 2
	srv := newServer(t, discordtest.WithShardCount(shards))
	s, err := srv.NewSession(0, shards) // DMs go to shard 0
	require.NoError(t, err)
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	got := make(chan *discordgo.InteractionCreate, 1)
	s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { got <- i })
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	ctx := testContext(t)
	id, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", UserID: "42", Username: "alice"})
	require.NoError(t, err)
	select {
	case i := <-got:
		assert.Equal(t, id, i.ID)
		assert.Empty(t, i.GuildID)
		assert.Nil(t, i.Member)
		if assert.NotNil(t, i.User) {
			assert.Equal(t, "42", i.User.ID)
			assert.Equal(t, "alice", i.User.Username)
		}
		assert.Equal(t, discordgo.InteractionContextBotDM, i.Context)
	case <-ctx.Done():
		t.Fatal("no INTERACTION_CREATE")
	}
}

func TestInteractErrors(t *testing.T) {
	t.Parallel()
	const shards = 2
	online := discordtest.GuildIDForShard(0, 0, shards)
	offline := discordtest.GuildIDForShard(0, 1, shards)
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(online, offline))
	_, rec := openSession(t, srv, 0, shards, true)
	rec.waitLog(1)
	ctx := testContext(t)

	s := restSession(t, srv)
	_, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: online, UserID: "42"})
	assert.ErrorIs(t, err, discordtest.ErrUnknownCommand, "nothing registered yet")
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		spec discordtest.InteractionSpec
		want error
	}{
		"unknown command": {discordtest.InteractionSpec{Command: "nope", GuildID: online, UserID: "42"}, discordtest.ErrUnknownCommand},
		"unknown guild":   {discordtest.InteractionSpec{Command: "vote", GuildID: "77", UserID: "42"}, discordtest.ErrUnknownGuild},
		"shard offline":   {discordtest.InteractionSpec{Command: "vote", GuildID: offline, UserID: "42"}, discordtest.ErrShardNotConnected},
		"no user":         {discordtest.InteractionSpec{Command: "vote", GuildID: online}, discordtest.ErrInvalidSnowflake},
	} {
		_, _, err := srv.Interact(ctx, tc.spec)
		assert.ErrorIs(t, err, tc.want, name)
	}
	require.NoError(t, srv.Outage(ctx, online))
	_, _, err = srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: online, UserID: "42"})
	assert.ErrorIs(t, err, discordtest.ErrGuildUnavailable)
}

// TestRESTDirectMessages: discordgo's UserChannelCreate and ChannelMessageSend
// reach the fake, which keeps one DM channel per user and records each
// message; a user who blocks DMs gets nothing (403, code 50007), and a channel
// the fake never opened is 404 Unknown Channel.
func TestRESTDirectMessages(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	ctx := testContext(t)
	const alice, bob = "4000000000000000004", "5000000000000000005"

	ch, err := s.UserChannelCreate(alice, discordgo.WithContext(ctx))
	require.NoError(t, err)
	assert.Equal(t, discordgo.ChannelTypeDM, ch.Type)
	require.Len(t, ch.Recipients, 1)
	assert.Equal(t, alice, ch.Recipients[0].ID)
	msg, err := s.ChannelMessageSend(ch.ID, "you can vote again", discordgo.WithContext(ctx))
	require.NoError(t, err)
	assert.Equal(t, "you can vote again", msg.Content)
	assert.Equal(t, ch.ID, msg.ChannelID)
	assert.Equal(t, srv.BotUserID(), msg.Author.ID)

	again, err := s.UserChannelCreate(alice)
	require.NoError(t, err)
	assert.Equal(t, ch.ID, again.ID, "one DM channel per user")
	_, err = s.ChannelMessageSend(again.ID, "second")
	require.NoError(t, err)

	got, err := srv.WaitDirectMessages(ctx, alice, 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, discordtest.DirectMessage{UserID: alice, ChannelID: ch.ID, MessageID: msg.ID, Content: "you can vote again"}, got[0])
	assert.Equal(t, "second", got[1].Content)

	require.NoError(t, srv.BlockDMs(bob))
	bobCh, err := s.UserChannelCreate(bob)
	require.NoError(t, err, "opening the channel succeeds even when DMs are closed, as on Discord")
	_, err = s.ChannelMessageSend(bobCh.ID, "hello")
	requireRESTError(t, err, http.StatusForbidden, 50007)

	_, err = s.ChannelMessageSend("6000000000000000006", "hello")
	requireRESTError(t, err, http.StatusNotFound, 10003)
	_, err = s.ChannelMessageSend(ch.ID, "")
	requireRESTError(t, err, http.StatusBadRequest, 50006)
	_, err = s.UserChannelCreate("not-a-snowflake")
	requireRESTError(t, err, http.StatusBadRequest, 50035)

	assert.Len(t, srv.DirectMessages(), 2, "refused messages are not recorded")
	assert.ErrorIs(t, srv.BlockDMs("x"), discordtest.ErrInvalidSnowflake)
}

// TestRESTDirectMessageFaults: the DM routes take injected faults like any
// other route.
func TestRESTDirectMessageFaults(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	s.MaxRestRetries = 0
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "POST", Path: "/channels/*", Status: http.StatusOK, Body: "{         "}))
	ch, err := s.UserChannelCreate("4000000000000000004")
	require.NoError(t, err)
	_, err = s.ChannelMessageSend(ch.ID, "hi")
	require.Error(t, err)
	assert.Empty(t, srv.DirectMessages())
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "POST", Path: "/users/@me/channels", Status: http.StatusOK, Body: "{         "}))
	_, err = s.UserChannelCreate("4000000000000000004")
	require.Error(t, err)
}

// TestRESTDirectMessageEnforcedNonce: a message sent again with the same
// enforced nonce is answered with the first one and not created again, as
// Discord does; the same nonce not enforced, or another nonce, creates a new
// message.
func TestRESTDirectMessageEnforcedNonce(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	ctx := testContext(t)
	const alice = "4000000000000000004"
	ch, err := s.UserChannelCreate(alice, discordgo.WithContext(ctx))
	require.NoError(t, err)
	send := func(nonce string, enforce bool) string {
		body := map[string]any{"content": "vote again", "nonce": nonce, "enforce_nonce": enforce}
		ep := discordgo.EndpointChannelMessages(ch.ID)
		b, err := s.RequestWithBucketID(http.MethodPost, ep, body, ep, discordgo.WithContext(ctx))
		require.NoError(t, err)
		var m discordgo.Message
		require.NoError(t, json.Unmarshal(b, &m))
		return m.ID
	}
	first := send("n1", true)
	assert.Equal(t, first, send("n1", true), "a repeat of an enforced nonce returns the first message")
	assert.NotEqual(t, first, send("n2", true))
	assert.NotEqual(t, first, send("n1", false), "a nonce not enforced is not checked")
	assert.Len(t, srv.DirectMessages(), 3)
}

// do sends one authorized request to the fake and returns the response,
// body read.
func do(t *testing.T, ctx context.Context, srv *discordtest.Server, method, path string) (*http.Response, []byte, error) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPut || method == http.MethodPost || method == http.MethodPatch {
		body = strings.NewReader(`[]`)
	}
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+"/api/v9"+path, body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+srv.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestEveryRouteTakesFaults: on each endpoint, a fault injected for its
// method and path is played on a request to that endpoint, once, and the
// next request gets the normal answer.
func TestEveryRouteTakesFaults(t *testing.T) {
	t.Parallel()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(guild))
	app := srv.ApplicationID()
	for route, path := range map[string]string{
		"GET /gateway":                 "/gateway",
		"GET /gateway/bot":             "/gateway/bot",
		"GET /users/@me":               "/users/@me",
		"GET /oauth2/applications/@me": "/oauth2/applications/@me",
		"GET /applications/@me":        "/applications/@me",
		"GET commands":                 "/applications/" + app + "/commands",
		"PUT commands":                 "/applications/" + app + "/commands",
		"POST commands":                "/applications/" + app + "/commands",
		"PUT guild commands":           "/applications/" + app + "/guilds/" + guild + "/commands",
		"PUT role":                     "/guilds/" + guild + "/members/1300000000000000001/roles/1300000000000000002",
		"DELETE role":                  "/guilds/" + guild + "/members/1300000000000000001/roles/1300000000000000002",
		"POST /users/@me/channels":     "/users/@me/channels",
		"POST message":                 "/channels/1300000000000000004/messages",
		"POST callback":                "/interactions/1300000000000000003/tok/callback",
		"PATCH original":               "/webhooks/" + app + "/tok/messages/@original",
		"POST followup":                "/webhooks/" + app + "/tok",
	} {
		method, _, _ := strings.Cut(route, " ")
		require.NoError(t, srv.Inject(discordtest.Fault{Method: method, Path: path, RetryAfter: 1500 * time.Millisecond}))
		resp, _, err := do(t, testContext(t), srv, method, path)
		require.NoError(t, err, route)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, route)
		assert.Equal(t, "1.5", resp.Header.Get("Retry-After"), route)
		resp, _, err = do(t, testContext(t), srv, method, path)
		require.NoError(t, err, route)
		assert.NotEqual(t, http.StatusTooManyRequests, resp.StatusCode, route)
	}
}

// TestRateLimitedAnswer: a 429 as Discord sends it, headers and body; a
// global one says so.
func TestRateLimitedAnswer(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", Times: 2, RetryAfter: 250 * time.Millisecond}))
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", RetryAfter: time.Minute,
		Header: map[string]string{"X-RateLimit-Global": "true"}}))
	for _, want := range []struct {
		retry  string
		global bool
	}{{"0.25", false}, {"0.25", false}, {"60", true}} {
		resp, body, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
		require.NoError(t, err)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, want.retry, resp.Header.Get("Retry-After"))
		assert.Equal(t, want.retry, resp.Header.Get("X-RateLimit-Reset-After"))
		assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, want.global, resp.Header.Get("X-RateLimit-Global") == "true")
		assert.Equal(t, map[bool]string{false: "user", true: "global"}[want.global], resp.Header.Get("X-RateLimit-Scope"))
		var b struct {
			RetryAfter float64 `json:"retry_after"`
			Global     bool    `json:"global"`
		}
		require.NoError(t, json.Unmarshal(body, &b))
		assert.Equal(t, want.global, b.Global)
	}
	resp, _, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	calls := srv.Requests()
	require.Len(t, calls, 4)
	assert.Equal(t, http.StatusTooManyRequests, calls[0].Status, "a played fault is recorded")
}

// TestLongBody: the body has the size asked for; an endless one stops when
// the client goes.
func TestLongBody(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/users/@me", Status: http.StatusOK, Body: "{" + strings.Repeat(" ", 99_999)}))
	resp, body, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, body, 100_000)

	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/users/@me", Body: "{", Endless: true}))
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, srv.APIBase()+"users/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+srv.Token())
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(10<<20), n, "the endless body ended")
	require.NoError(t, resp.Body.Close())
}

// TestNoAnswer: a request under a long Delay is held until the client gives
// up (Held counts it meanwhile), or until Close.
func TestNoAnswer(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/gateway", Delay: time.Hour, Times: 2}))
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { _, _, err := do(t, ctx, srv, http.MethodGet, "/gateway"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, waitFor, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return srv.Held() == 0 }, waitFor, time.Millisecond)

	assert.Equal(t, 1, srv.PendingFaults())
	resp, _, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another path is not held")

	// Close ends a held request too.
	go func() { _, _, err := do(t, testContext(t), srv, http.MethodGet, "/gateway"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, waitFor, time.Millisecond)
	srv.Close()
	<-done
}

// TestInjectMisuse: a fault that does nothing, a body with no answer to
// carry it, a negative count or wait, a bad status or a relative path is an
// error, and nothing is queued.
func TestInjectMisuse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, f := range []discordtest.Fault{
		{},
		{Path: "/gateway"},
		{Delay: time.Second, Body: "{}"},
		{Status: 429, Times: -1},
		{Delay: -time.Second},
		{Status: 1000},
		{Path: "gateway", Status: 500},
		{Method: "GET /gateway", Status: 500},
	} {
		require.Error(t, srv.Inject(f), "%+v", f)
	}
	assert.Zero(t, srv.PendingFaults())
}
