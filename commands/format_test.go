package commands_test

import (
	"fmt"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// TestPrintedJobHoldsNoBotToken: a JobConfig or Job with a Session, printed
// under any verb or logged, does not show the session's bot token (fmt prints
// a *discordgo.Session reached under %s, %q, %d or %x in full).
func TestPrintedJobHoldsNoBotToken(t *testing.T) {
	t.Parallel()
	const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token"
	s, err := discordgo.New("Bot " + botToken)
	require.NoError(t, err)
	_, c := newService(t)
	cfg := commands.JobConfig{Session: s}
	job, err := commands.NewJob(newSyncer(t, c, commands.Config{}), cfg)
	require.NoError(t, err)

	out := testlog.PrintAll(cfg, &cfg, job, []any{cfg}, struct{ J *commands.Job }{job})
	require.NotContains(t, out, "SEKRIT")
	require.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	require.NotContains(t, out, fmt.Sprintf("%X", "BOTSEKRIT"))
	require.NotContains(t, out, "!ERROR", "slog prints them through LogValue")
	require.Contains(t, out, "commands.Job{commands.JobConfig{commands: 0, session: shard 0, ready: false, interval: 15m0s}}")

	for _, z := range []*commands.Job{nil, {}} {
		for _, verb := range []string{"%v", "%s", "%d"} {
			require.Equal(t, "commands.Job(not made by commands.NewJob)", fmt.Sprintf(verb, z))
		}
	}
}

// TestSyncerPrintsByName: fmt of a Syncer walked its client and hash store;
// under every verb it prints its name alone.
func TestSyncerPrintsByName(t *testing.T) {
	t.Parallel()
	_, c := newService(t)
	s := newSyncer(t, c, commands.Config{})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		require.Equal(t, "commands.Syncer", fmt.Sprintf(verb, s), verb)
	}
}
