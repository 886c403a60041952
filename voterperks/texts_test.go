package voterperks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// noVoter is a Votes in which nobody has voted: the gate answers everyone.
type noVoter struct{}

func (noVoter) Active(string) voterewards.Status { return voterewards.Status{Covered: true} }

// textCase is one text function of the perks, replaced by bad, and what the
// user sees instead.
type textCase struct {
	name, command, want string
	set                 func(t *voterperks.Texts, bad func())
}

var textCases = []textCase{
	{"Vote", "vote", "Vote for me on Top.gg", func(t *voterperks.Texts, bad func()) {
		t.Vote = func(voterperks.VoteInfo) string { bad(); return "custom vote" }
	}},
	{"VoteExtra", "vote", "Vote for me on Top.gg", func(t *voterperks.Texts, bad func()) {
		t.VoteExtra = func(context.Context, voterperks.VoteInfo) string { bad(); return "custom extra" }
	}},
	{"Leaderboard", "leaderboard", "I could not read the leaderboard", func(t *voterperks.Texts, bad func()) {
		t.Leaderboard = func(time.Time, []voterewards.Standing, error) string { bad(); return "custom board" }
	}},
	{"Gate", premiumName, "This command is for voters", func(t *voterperks.Texts, bad func()) {
		t.Gate = func(voterperks.VoteInfo) string { bad(); return "custom gate" }
	}},
}

// perksWith attaches perks of texts (and a gate on /premium), whose answers
// wait within for their texts, to the open session of shard 0; their records
// go to log.
func (w *world) perksWith(texts voterperks.Texts, log *testlog.Buffer, within time.Duration) {
	w.t.Helper()
	cfg := voterperks.WithAnswerWithin(voterperks.Config{
		BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return w.sessions[0] }, State: voterewards.NewMemoryStore(),
		Texts: texts, Logger: log.Logger(),
	}, within)
	p, err := voterperks.New(noVoter{}, cfg)
	require.NoError(w.t, err)
	w.sessions[0].AddHandler(p.Handle)
	w.sessions[0].AddHandler(p.Gate(premium, premiumName))
	require.NoError(w.t, w.sessions[0].Open())
}

// TestPanickingTextIsAnErrorAnswer: a text function that panics (Vote,
// VoteExtra, Leaderboard, the gate's) killed the bot: they run on
// discordgo's goroutines. The user gets the answer an error gets, the panic
// is logged once with its stack, and the next interaction is answered too.
func TestPanickingTextIsAnErrorAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			var texts voterperks.Texts
			tc.set(&texts, func() { panic("a bug in " + tc.name) })
			log := &testlog.Buffer{}
			w.perksWith(texts, log, wait) // a panic is answered at once: the deadline is not what is tested
			for n := range 2 {
				reply := w.interact(0, tc.command, "320000000000000042", nil)
				assert.Contains(t, reply.Content, tc.want, "answer %d", n)
				assert.NotContains(t, reply.Content, "custom", "answer %d", n)
			}
			records := log.String()
			assert.Equal(t, 2, strings.Count(records, "a bug in "+tc.name), "one record per panic: %s", records)
			assert.Contains(t, records, "stack=", "the panic's stack is logged")
		})
	}
}

// TestContextDeafTextKeepsDiscordsDeadline: a text function that ignores its
// context (VoteExtra sleeping 8 s) delayed the answer past Discord's 3 s
// ("The application did not respond"). The answer comes without it while it
// still runs; the deadline here is shortened to 100 ms.
func TestContextDeafTextKeepsDiscordsDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			release := make(chan struct{})
			var texts voterperks.Texts
			tc.set(&texts, func() { <-release })
			log := &testlog.Buffer{}
			w.perksWith(texts, log, 100*time.Millisecond)
			t.Cleanup(func() { close(release) }) // before the world's cleanups: the text returns late
			reply := w.interact(0, tc.command, "320000000000000042", nil)
			assert.Contains(t, reply.Content, tc.want)
			assert.NotContains(t, reply.Content, "custom")
			assert.Contains(t, log.String(), "did not answer in time")
		})
	}
}

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
