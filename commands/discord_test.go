package commands_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// The application ID differs from the bot user's ID, as for bots created
// before 2020, so the test sees which one SyncFromDiscord uses.
const testAppID = "264811613708746752"

// newDiscord starts a fake Discord of the test's application and makes a
// real discordgo session on it, not open.
func newDiscord(t *testing.T) (*discordtest.Server, *discordgo.Session) {
	t.Helper()
	dsrv, err := discordtest.NewServer(discordtest.WithApplicationID(testAppID))
	require.NoError(t, err)
	t.Cleanup(dsrv.Close)
	s, err := dsrv.NewSession(0, 1)
	require.NoError(t, err)
	return dsrv, s
}

// openDiscord is newDiscord with the session open; Open returns after READY.
func openDiscord(t *testing.T) (*discordtest.Server, *discordgo.Session) {
	t.Helper()
	dsrv, s := newDiscord(t)
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) }) // runs before dsrv.Close
	return dsrv, s
}

// commandFetches counts the global-command reads the fake Discord answered.
func commandFetches(dsrv *discordtest.Server) int {
	n := 0
	for _, c := range dsrv.Calls() {
		if c.Method == http.MethodGet && c.Path == "/api/v9/applications/"+testAppID+"/commands" {
			n++
		}
	}
	return n
}

func TestSyncFromDiscordPublishesWhatWasRegistered(t *testing.T) {
	t.Parallel()
	dsrv, session := openDiscord(t)
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	// The bot registers its commands the usual way, without Discord's ids.
	registered := botCommands()
	for _, cmd := range registered {
		cmd.ID, cmd.ApplicationID, cmd.Version = "", "", ""
	}
	echoed, err := session.ApplicationCommandBulkOverwrite(testAppID, "", registered)
	require.NoError(t, err)
	require.Len(t, echoed, 3)
	require.NotEmpty(t, echoed[0].ID, "the fake Discord assigns ids")

	res, err := s.SyncFromDiscord(t.Context(), session)
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, 3, res.Commands)
	require.Equal(t, 1, commandFetches(dsrv))
	bodies := putBodies(srv)
	require.Len(t, bodies, 1)
	require.JSONEq(t, wantBotCommands, string(bodies[0]))

	// Unchanged on Discord: nothing sent.
	again, err := s.SyncFromDiscord(t.Context(), session)
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, again.Outcome)
	require.Equal(t, commands.OutcomeUnchanged, again.Outcome)
	require.Equal(t, res.Hash, again.Hash)

	// The bot's own list and Discord's copy of it are the same definitions.
	own, err := s.Sync(t.Context(), registered)
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, own.Outcome)
	require.Equal(t, res.Hash, own.Hash)
	require.Len(t, putBodies(srv), 1)

	// A command changed on Discord is published; removing all clears.
	registered[0].Description = "Vote for us"
	_, err = session.ApplicationCommandBulkOverwrite(testAppID, "", registered)
	require.NoError(t, err)
	_, err = s.SyncFromDiscord(t.Context(), session)
	require.NoError(t, err)
	_, err = session.ApplicationCommandBulkOverwrite(testAppID, "", []*discordgo.ApplicationCommand{})
	require.NoError(t, err)
	cleared, err := s.SyncFromDiscord(t.Context(), session)
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, cleared.Outcome)
	require.Zero(t, cleared.Commands)

	bodies = putBodies(srv)
	require.Len(t, bodies, 3)
	require.Equal(t, "Vote for us", jsonValue(t, bodies[1]).([]any)[0].(map[string]any)["description"])
	require.JSONEq(t, `[]`, string(bodies[2]))
}

func TestSyncFromDiscordSkipsNonBotProjectWithoutAskingDiscord(t *testing.T) {
	t.Parallel()
	dsrv, session := openDiscord(t)
	srv, c := newService(t, topggtest.WithProject(topggtest.DiscordServer()))
	s := newSyncer(t, c, commands.Config{})

	res, err := s.SyncFromDiscord(t.Context(), session)
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, commands.OutcomeSkipped, res.Outcome)
	require.Zero(t, commandFetches(dsrv))
	require.Zero(t, countRequests(srv, http.MethodPut, commandsPath))
}

func TestSyncFromDiscordDiscordFailure(t *testing.T) {
	t.Parallel()
	_, session := openDiscord(t)
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	// Another application's commands are not ours to read: 403 Missing Access.
	session.State.Lock()
	session.State.Application.ID = "999999999999999999"
	session.State.Unlock()
	_, err := s.SyncFromDiscord(t.Context(), session)
	var restErr *discordgo.RESTError
	require.ErrorAs(t, err, &restErr)
	require.Equal(t, http.StatusForbidden, restErr.Response.StatusCode)
	require.NotContains(t, err.Error(), session.Token)
	require.Zero(t, countRequests(srv, http.MethodPut, commandsPath))
}

func TestSyncFromDiscordBeforeReady(t *testing.T) {
	t.Parallel()
	_, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	unopened, err := discordgo.New("Bot not-used")
	require.NoError(t, err)
	_, err = s.SyncFromDiscord(context.Background(), unopened)
	require.ErrorIs(t, err, commands.ErrNotReady)
}
