package commands_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
)

// TestJobReadsAndPublishesNothingOnceItsTermIsOver: a fleet leader's Job
// syncs from Discord while its term is valid; once the term's deadline has
// passed (the clock jumps past it, as after a pause, and nothing has
// cancelled the Job's context), the next sync neither reads Discord's
// commands nor publishes, nothing is reported, and Run returns (the failed
// check ended the term and cancelled its context).
func TestJobReadsAndPublishesNothingOnceItsTermIsOver(t *testing.T) {
	t.Parallel()
	dsrv, err := discordtest.NewServer(discordtest.WithApplicationID(testAppID))
	require.NoError(t, err)
	t.Cleanup(dsrv.Close)
	session, err := dsrv.NewSession(0, 1)
	require.NoError(t, err)
	srv, c := newService(t)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	results := make(chan error, 10)
	job, err := commands.NewJob(newSyncer(t, c, commands.Config{}), commands.WithJobClock(commands.JobConfig{Session: session,
		OnResult: func(_ context.Context, _ commands.Result, err error) { results <- err }}, clk))
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tm := term.New(clk, start.Add(commands.DefaultJobInterval), cancel)
	done := make(chan error, 1)
	go func() { done <- job.Run(term.With(ctx, tm)) }()
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })

	select {
	case err := <-results:
		require.NoError(t, err, "the sync within the term")
	case <-time.After(5 * time.Second):
		t.Fatal("no sync within the term")
	}
	reads := discordReads(dsrv)
	require.Positive(t, reads)
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond)
	clk.Advance(commands.DefaultJobInterval) // the next sync is due, and the term's deadline passed
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run went on after its term was over")
	}
	assert.Equal(t, reads, discordReads(dsrv), "Discord's commands were read after the term's deadline")
	assert.Len(t, putBodies(srv), 1, "published after the term's deadline")
	assert.Empty(t, results, "a sync was reported after the term's deadline")
}

// discordReads counts the reads of the application's commands on Discord.
func discordReads(dsrv *discordtest.Server) int {
	n := 0
	for _, c := range dsrv.Calls() {
		if c.Method == http.MethodGet && strings.HasSuffix(c.Path, "/commands") {
			n++
		}
	}
	return n
}
