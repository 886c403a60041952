package commands_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func newSyncer(t *testing.T, c *topgg.Client, cfg commands.Config) *commands.Syncer {
	t.Helper()
	s, err := commands.New(c, cfg)
	require.NoError(t, err)
	return s
}

func TestNewRefusesNilClient(t *testing.T) {
	t.Parallel()
	s, err := commands.New(nil, commands.Config{})
	require.Error(t, err)
	require.Nil(t, s)
}

func TestSyncPublishesNormalizedDefinitions(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	res, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, 3, res.Commands)
	require.Len(t, res.Hash, 64)

	bodies := putBodies(srv)
	require.Len(t, bodies, 1)
	require.JSONEq(t, wantBotCommands, string(bodies[0]))
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPut {
			require.Equal(t, "Bearer "+srv.Token(), r.Header.Get("Authorization"))
			require.Contains(t, r.Header.Get("Content-Type"), "application/json")
		}
	}
	stored, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, wantBotCommands, string(stored))
	require.NotContains(t, string(stored), "1200000000000000001", "a Discord-assigned id leaked")
}

func TestSyncUnchangedDefinitionsAreNotSentTwice(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	_, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)

	// The same definitions, as a bot builds them before registering: no ids,
	// no version, type left to its default, empty rather than nil slices.
	again := botCommands()
	for _, cmd := range again {
		cmd.ID, cmd.ApplicationID, cmd.Version = "", "", ""
	}
	again[1].Type = 0
	again[0].Options = []*discordgo.ApplicationCommandOption{}
	res, err := s.Sync(t.Context(), again)
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, commands.OutcomeUnchanged, res.Outcome)
	require.Equal(t, 3, res.Commands)

	require.Len(t, putBodies(srv), 1)
	require.Equal(t, 1, countRequests(srv, http.MethodGet, "/v1/projects/@me"), "the project is read once")
}

func TestSyncChangedDefinitionIsSent(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	first, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)

	changed := botCommands()
	changed[1].Options[0].Options[0].Options[1].MaxValue = 72
	second, err := s.Sync(t.Context(), changed)
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, second.Outcome)
	require.NotEqual(t, first.Hash, second.Hash)

	bodies := putBodies(srv)
	require.Len(t, bodies, 2)
	body := jsonValue(t, bodies[1]).([]any)
	hours := body[1].(map[string]any)["options"].([]any)[0].(map[string]any)["options"].([]any)[0].(map[string]any)["options"].([]any)[1].(map[string]any)
	require.Equal(t, "hours", hours["name"])
	require.InDelta(t, 72, hours["max_value"], 0)

	// Going back is a change too: the listing holds the changed version.
	third, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, third.Outcome)
	require.Equal(t, first.Hash, third.Hash)
	bodies = putBodies(srv)
	require.Len(t, bodies, 3)
	require.JSONEq(t, wantBotCommands, string(bodies[2]))
}

func TestSyncSkipsProjectThatIsNotADiscordBot(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]topggtest.Project{
		"discord server": topggtest.DiscordServer(),
		"roblox game":    topggtest.RobloxGame(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c := newService(t, topggtest.WithProject(p))
			var logs logBuffer
			s := newSyncer(t, c, commands.Config{Logger: newLogger(&logs)})

			res, err := s.Sync(t.Context(), botCommands())
			require.NoError(t, err)
			require.NotEqual(t, commands.OutcomePublished, res.Outcome)
			require.Equal(t, commands.OutcomeSkipped, res.Outcome)
			require.Empty(t, res.Hash)

			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			require.Len(t, lines, 1, "one clear log line: %s", logs.String())
			require.Contains(t, lines[0], "only a Discord bot project has commands")
			require.Contains(t, lines[0], "platform="+p.Platform)
			require.Contains(t, lines[0], "type="+p.Type)
			require.NotContains(t, lines[0], srv.Token())

			_, err = s.Sync(t.Context(), nil)
			require.NoError(t, err)
			require.Zero(t, countRequests(srv, http.MethodPut, commandsPath))
			require.Equal(t, 1, countRequests(srv, http.MethodGet, "/v1/projects/@me"))
			_, ok := srv.Commands()
			require.False(t, ok)
		})
	}
}

func TestSyncEmptyListClearsOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})

	res, err := s.Sync(t.Context(), nil)
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome, "the first sync of an empty list clears")
	require.Zero(t, res.Commands)

	res, err = s.Sync(t.Context(), []*discordgo.ApplicationCommand{})
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, commands.OutcomeUnchanged, res.Outcome)

	_, err = s.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	res, err = s.Sync(t.Context(), nil)
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome)

	bodies := putBodies(srv)
	require.Len(t, bodies, 3)
	require.JSONEq(t, `[]`, string(bodies[0]))
	require.JSONEq(t, wantBotCommands, string(bodies[1]))
	require.JSONEq(t, `[]`, string(bodies[2]))
	stored, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, `[]`, string(stored))
}

func TestSyncFailedPublishIsRetriedByNextSync(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		fault    topggtest.Fault
		status   int
		attempts int
	}{
		"5xx beyond retries": {
			fault:  topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusInternalServerError, Times: 3},
			status: http.StatusInternalServerError, attempts: 3,
		},
		"422": {
			fault:  topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusUnprocessableEntity},
			status: http.StatusUnprocessableEntity, attempts: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c := newService(t)
			store := commands.NewMemoryHashStore()
			s := newSyncer(t, c, commands.Config{Store: store})
			require.NoError(t, srv.Inject(tc.fault))

			res, err := s.Sync(t.Context(), botCommands())
			require.Error(t, err)
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tc.status, apiErr.StatusCode)
			require.Equal(t, commands.OutcomeFailed, res.Outcome, "a failed publish is no skip")
			require.Equal(t, tc.attempts, countRequests(srv, http.MethodPut, commandsPath))
			saved, err := store.LoadHash(t.Context())
			require.NoError(t, err)
			require.Empty(t, saved, "a failed publish must not save the hash")
			_, ok := srv.Commands()
			require.False(t, ok)

			res, err = s.Sync(t.Context(), botCommands())
			require.NoError(t, err)
			require.Equal(t, commands.OutcomePublished, res.Outcome)
			require.Equal(t, tc.attempts+1, countRequests(srv, http.MethodPut, commandsPath))
			saved, err = store.LoadHash(t.Context())
			require.NoError(t, err)
			require.Equal(t, res.Hash, saved)
			stored, ok := srv.Commands()
			require.True(t, ok)
			require.JSONEq(t, wantBotCommands, string(stored))
		})
	}
}

func TestSyncProjectReadFailureIsRetriedByNextSync(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodGet, Path: "/v1/projects/@me", Status: http.StatusServiceUnavailable, Times: 3}))

	_, err := s.Sync(t.Context(), botCommands())
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	require.Zero(t, countRequests(srv, http.MethodPut, commandsPath))

	res, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, 4, countRequests(srv, http.MethodGet, "/v1/projects/@me"))
	require.Len(t, putBodies(srv), 1)
}

func TestSyncInvalidDefinitionsSendNothing(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	dup := botCommands()
	dup[2].Name = "vote"
	dup[2].Type = discordgo.ChatApplicationCommand
	dup[2].Description = "again"

	for name, cmds := range map[string][]*discordgo.ApplicationCommand{
		"nil command": {nil},
		"no name":     {{Description: "nameless"}},
		"duplicate":   dup,
		"upper case":  {{Name: "Vote", Description: "Vote for the bot"}},
		"27 options": {{Name: "vote", Description: "d", Options: many(27, func(i int) *option {
			return opt(optString, fmt.Sprint("o", i))
		})}},
	} {
		_, err := s.Sync(t.Context(), cmds)
		var verr *topgg.ValidationError
		require.ErrorAs(t, err, &verr, name)
	}
	require.Empty(t, srv.Requests())
}

// TestSyncHashSurvivesRestart: a new Syncer on the same store does not
// publish again; one of another project does.
func TestSyncHashSurvivesRestart(t *testing.T) {
	t.Parallel()
	store := commands.NewMemoryHashStore()
	srv, c := newService(t)

	first := newSyncer(t, c, commands.Config{Store: store})
	_, err := first.Sync(t.Context(), botCommands())
	require.NoError(t, err)

	restarted := newSyncer(t, c, commands.Config{Store: store})
	res, err := restarted.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.NotEqual(t, commands.OutcomePublished, res.Outcome)
	require.Equal(t, commands.OutcomeUnchanged, res.Outcome)
	require.Len(t, putBodies(srv), 1)

	// The same store with another bot project's token still publishes there.
	other := topggtest.DiscordBot()
	other.ID = "803190510032756999"
	otherSrv, otherClient := newService(t, topggtest.WithProject(other))
	moved := newSyncer(t, otherClient, commands.Config{Store: store})
	res, err = moved.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome)
	require.Len(t, putBodies(otherSrv), 1)
}

// failingStore is a HashStore whose reads or writes fail.
type failingStore struct {
	failLoad, failSave bool
	commands.MemoryHashStore
}

func (f *failingStore) LoadHash(ctx context.Context) (string, error) {
	if f.failLoad {
		return "", errors.New("disk on fire")
	}
	return f.MemoryHashStore.LoadHash(ctx)
}

func (f *failingStore) SaveHash(ctx context.Context, h string) error {
	if f.failSave {
		return errors.New("disk full")
	}
	return f.MemoryHashStore.SaveHash(ctx, h)
}

func TestSyncStoreFailuresDoNotFailTheSync(t *testing.T) {
	t.Parallel()
	for name, store := range map[string]*failingStore{
		"load": {failLoad: true},
		"save": {failSave: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c := newService(t)
			var logs logBuffer
			s := newSyncer(t, c, commands.Config{Store: store, Logger: newLogger(&logs)})
			for range 2 {
				res, err := s.Sync(t.Context(), botCommands())
				require.NoError(t, err)
				require.Equal(t, commands.OutcomePublished, res.Outcome, "without a usable hash every sync publishes")
			}
			require.Len(t, putBodies(srv), 2)
			require.Contains(t, logs.String(), "level=WARN")
			require.Contains(t, logs.String(), "disk")
		})
	}
}

func TestSyncCancelledContext(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Sync(ctx, botCommands())
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, countRequests(srv, http.MethodPut, commandsPath))
}

func TestSyncConcurrentCallsPublishOnce(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	var wg sync.WaitGroup
	skipped := make([]bool, 8)
	for i := range skipped {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Sync(context.Background(), botCommands())
			assert.NoError(t, err)
			skipped[i] = res.Outcome != commands.OutcomePublished
		}()
	}
	wg.Wait()
	require.Len(t, putBodies(srv), 1)
	published := 0
	for _, sk := range skipped {
		if !sk {
			published++
		}
	}
	require.Equal(t, 1, published)
}

func TestSyncWaitingForItsTurnHonoursContext(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Delay: time.Minute}))

	slowCtx, cancelSlow := context.WithCancel(t.Context())
	defer cancelSlow()
	slowErr := make(chan error, 1)
	go func() {
		_, err := s.Sync(slowCtx, botCommands())
		slowErr <- err
	}()
	require.Eventually(t, func() bool { return countRequests(srv, http.MethodPut, commandsPath) == 1 },
		5*time.Second, 5*time.Millisecond, "the first sync holds its turn in a slow PUT")

	waitCtx, cancelWait := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelWait()
	_, err := s.Sync(waitCtx, botCommands())
	require.ErrorIs(t, err, context.DeadlineExceeded)

	cancelSlow()
	require.ErrorIs(t, <-slowErr, context.Canceled)
	res, err := s.Sync(t.Context(), botCommands())
	require.NoError(t, err)
	require.Equal(t, commands.OutcomePublished, res.Outcome, "the cancelled publish saved no hash")
	require.Equal(t, 2, countRequests(srv, http.MethodPut, commandsPath))
}

const (
	hashA = "0000000000000000000000000000000000000000000000000000000000000001"
	hashB = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
)

func TestHashStores(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) commands.HashStore{
		"memory":      func(*testing.T) commands.HashStore { return commands.NewMemoryHashStore() },
		"memory zero": func(*testing.T) commands.HashStore { return &commands.MemoryHashStore{} },
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := mk(t)
			ctx := t.Context()
			h, err := s.LoadHash(ctx)
			require.NoError(t, err)
			require.Empty(t, h)

			require.NoError(t, s.SaveHash(ctx, hashA))
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashA, h)

			require.NoError(t, s.SaveHash(ctx, hashB))
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashB, h)

			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			_, err = s.LoadHash(cancelled)
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, s.SaveHash(cancelled, hashA), context.Canceled)
			h, err = s.LoadHash(ctx)
			require.NoError(t, err)
			require.Equal(t, hashB, h, "a cancelled save changes nothing")

			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hash := hashA
					if i%2 == 1 {
						hash = hashB
					}
					assert.NoError(t, s.SaveHash(context.Background(), hash))
					got, err := s.LoadHash(context.Background())
					assert.NoError(t, err)
					assert.Contains(t, []string{hashA, hashB}, got)
				}()
			}
			wg.Wait()
		})
	}
}

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
	for _, c := range dsrv.Requests() {
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
