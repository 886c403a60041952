package voterperks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// TestVoteExtra: Texts.VoteExtra adds the bot's own line to /vote's answer,
// after the library's text and before the remind option's, for the user who
// asked, under a context that ends within Discord's 3 s; an empty line adds
// nothing.
func TestVoteExtra(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	const points = "320000000000000042"
	w.texts.VoteExtra = func(ctx context.Context, v voterperks.VoteInfo) string {
		deadline, ok := ctx.Deadline()
		assert.True(t, ok && time.Until(deadline) <= 3*time.Second, "no deadline within Discord's 3 s")
		if v.UserID != points {
			return ""
		}
		return fmt.Sprintf("Points: 7 (all time: %d)", v.Stats.Votes)
	}
	bot := w.bot(w.config(), []int{0}, plugin.WithState(voterewards.NewMemoryStore()))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	require.Eventually(t, func() bool { return bot.Active(points).Covered }, wait, tick, "the history was never read")

	on := true
	reply := w.interact(0, "vote", points, &on).Content
	lines := strings.Split(reply, "\n")
	require.GreaterOrEqual(t, len(lines), 3, reply)
	assert.Equal(t, "Points: 7 (all time: 0)", lines[len(lines)-2], reply)
	assert.Equal(t, "I will send you a direct message when you can vote again.", lines[len(lines)-1], reply)

	other := w.interact(0, "vote", "320000000000000043", nil).Content
	assert.NotContains(t, other, "Points")
	assert.False(t, strings.HasSuffix(other, "\n"), "an empty extra added a line: %q", other)
}
