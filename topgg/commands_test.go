package topgg_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func TestSetCommands(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	defs := []json.RawMessage{
		json.RawMessage(`{"name":"vote","description":"Vote for the bot","type":1}`),
		json.RawMessage(`{"name":"Report","type":3}`),
	}

	require.NoError(t, c.SetCommands(t.Context(), defs))

	r := onlyRequest(t, srv)
	requireV1(t, srv, r, "PUT", "/v1/projects/@me/commands")
	want := `[{"name":"vote","description":"Vote for the bot","type":1},{"name":"Report","type":3}]`
	require.JSONEq(t, want, string(r.Body))
	got, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, want, string(got))
}

func TestSetCommandsNilClears(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)

	require.NoError(t, c.SetCommands(t.Context(), nil))
	require.Equal(t, "[]", string(onlyRequest(t, srv).Body))
	got, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, `[]`, string(got))
}

func TestSetCommandsNotABot(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithProject(topggtest.DiscordServer()))
	c := newClient(t, srv)
	defs := []json.RawMessage{json.RawMessage(`{"name":"vote","description":"Vote"}`)}

	// Before Project() the client cannot know: the service refuses.
	err := c.SetCommands(t.Context(), defs)
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 403, apiErr.StatusCode)
	require.NotErrorIs(t, err, topgg.ErrUnauthorized)

	_, err = c.Project(t.Context())
	require.NoError(t, err)
	n := len(srv.Requests())
	requireInvalid(t, c.SetCommands(t.Context(), defs), "commands")
	require.Len(t, srv.Requests(), n)
}
