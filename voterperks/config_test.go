package voterperks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// TestNewRefusesMisuse: a nil Votes, a BotID or role that is no Discord id,
// a missing Session or State are errors naming what is wrong.
func TestNewRefusesMisuse(t *testing.T) {
	t.Parallel()
	state := voterewards.NewMemoryStore()
	poller, err := voterewards.New(topggClient(t), voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: state,
	})
	require.NoError(t, err)
	session := func() *discordgo.Session { return nil }
	_, err = voterperks.New(nil, voterperks.Config{BotID: "1", Session: session})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	var typed *voterewards.Poller
	_, err = voterperks.New(typed, voterperks.Config{BotID: "1", Session: session})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	for name, cfg := range map[string]voterperks.Config{
		"BotID":   {BotID: "bot", Session: session, State: state},
		"Session": {BotID: "1", State: state},
		"State":   {BotID: "1", Session: session},
		"Role":    {BotID: "1", Session: session, State: state, Role: &voterperks.Role{GuildID: "1"}},
	} {
		_, err := voterperks.New(poller, cfg)
		var ce *topgg.ConfigError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Equal(t, "voterperks.Config."+name, ce.Field)
		}
	}
	p, err := voterperks.New(poller, voterperks.Config{BotID: "1", Session: session, State: state})
	require.NoError(t, err)
	assert.ErrorIs(t, p.SetReminder(t.Context(), "2", true), voterperks.ErrRemindersOff)
	v := voterewards.Vote{}
	v.PlatformID = "2"
	v.ExpiresAt = time.Now().Add(time.Hour)
	assert.NoError(t, p.OnReward(t.Context(), v), "no role: nothing to do")
}

// TestCommandsPassValidate: the ready definitions, default or overridden,
// pass commands.Validate; a description Discord would refuse does not.
func TestCommandsPassValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, commands.Validate(voterperks.Commands(voterperks.Texts{})))
	custom := voterperks.Commands(voterperks.Texts{VoteDescription: "Vote!", LeaderboardDescription: "Best voters"})
	require.NoError(t, commands.Validate(custom))
	assert.Equal(t, "Vote!", custom[0].Description)
	assert.Equal(t, voterperks.Commands(voterperks.Texts{})[0].Options[0].Description, custom[0].Options[0].Description, "a zero field keeps its default")
	long := voterperks.Commands(voterperks.Texts{VoteDescription: string(make([]byte, 101))})
	assert.Error(t, commands.Validate(long))
}

func topggClient(t testing.TB) *topgg.Client {
	t.Helper()
	c, err := topgg.New("token")
	require.NoError(t, err)
	return c
}

// TestPrintingThePerksWhileVotesArriveIsSafe: fmt of a Perks walked the
// store of its reminders unlocked while votes were ingested (a data race,
// under -race).
func TestPrintingThePerksWhileVotesArriveIsSafe(t *testing.T) {
	t.Parallel()
	store := voterewards.NewMemoryStore()
	poller, err := voterewards.New(noHistory{}, voterewards.Config{Store: store, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	require.NoError(t, err)
	p, err := voterperks.New(poller, voterperks.Config{BotID: "320000000000000042", Session: func() *discordgo.Session { return nil }, State: store, Reminders: true})
	require.NoError(t, err)
	out := testlog.PrintWhile(func() {
		now := time.Now()
		for n := range 200 {
			tv := topgg.Vote{UserID: fmt.Sprintf("81%016d", n), PlatformID: fmt.Sprintf("31%016d", n), Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			assert.NoError(t, poller.Ingest(context.Background(), voterewards.Vote{Vote: tv, Origin: voterewards.OriginWebhook}))
		}
	}, p)
	assert.Contains(t, out, "voterperks.Perks")
}

// noHistory is a vote history with no votes.
type noHistory struct{}

func (noHistory) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}
