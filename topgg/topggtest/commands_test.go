package topggtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPutCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	_, ok := s.Commands()
	require.False(t, ok)

	body := `[{"name":"vote","description":"Vote for the bot","type":1},{"name":"Report","type":3}]`
	r := v1(t, s, http.MethodPut, "/projects/@me/commands", body)
	requireStatus(t, r, http.StatusNoContent)
	require.Empty(t, r.Body)
	got, ok := s.Commands()
	require.True(t, ok)
	require.Equal(t, body, string(got))

	for name, bad := range map[string]string{
		"object":         `{"name":"vote"}`,
		"null":           `null`,
		"empty body":     ``,
		"missing name":   `[{"description":"x"}]`,
		"empty name":     `[{"name":""}]`,
		"name not text":  `[{"name":5}]`,
		"item not obj":   `["vote"]`,
		"one bad of two": `[{"name":"ok"},{"description":"x"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPut, "/projects/@me/commands", bad), http.StatusUnprocessableEntity)
		})
	}
	got, _ = s.Commands()
	require.Equal(t, body, string(got), "refused bodies change nothing")

	requireStatus(t, v1(t, s, http.MethodPut, "/projects/@me/commands", `[]`), http.StatusNoContent)
	got, ok = s.Commands()
	require.True(t, ok)
	require.Equal(t, "[]", string(got))
}

func TestPutCommandsOnlyForDiscordBots(t *testing.T) {
	t.Parallel()
	for _, p := range []Project{DiscordServer(), RobloxGame()} {
		s := newTestServer(t, WithProject(p))
		requireProblem(t, v1(t, s, http.MethodPut, "/projects/@me/commands", `[{"name":"vote"}]`), http.StatusForbidden)
		_, ok := s.Commands()
		require.False(t, ok)
	}
}

// TestPostCommands: POST /v1/projects/@me/commands, which both official v1
// SDKs send (Node 4.0 postCommands, topggpy 2.0 post_commands), sets the
// commands as PUT does; the record keeps the method as sent.
func TestPostCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	body := `[{"options":[],"name":"test","name_localizations":null,"description":"command description","description_localizations":null,"contexts":[],"default_permission":null,"default_member_permissions":null,"dm_permission":false,"integration_types":[],"nsfw":false}]`
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/commands", body), http.StatusNoContent)
	got, ok := s.Commands()
	require.True(t, ok)
	require.Equal(t, body, string(got))
	require.Equal(t, http.MethodPost, s.Requests()[0].Method)
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/commands", `[{"description":"x"}]`), http.StatusUnprocessableEntity)
}
