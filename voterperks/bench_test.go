package voterperks_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// BenchmarkGate measures the gate's decision for a voter (the cache lookup
// and the call of the wrapped handler), beside its floor: the bare
// Poller.Active it reads. No request is made.
func BenchmarkGate(b *testing.B) {
	state := voterewards.NewMemoryStore()
	poller, err := voterewards.New(topggClient(b), voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: state,
	})
	require.NoError(b, err)
	now := time.Now()
	const user = "300000000000000001"
	require.NoError(b, poller.Ingest(context.Background(), voterewards.Vote{Vote: topgg.Vote{UserID: "100000000000000001",
		PlatformID: user, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}, Origin: voterewards.OriginWebhook}))
	perks, err := voterperks.New(poller, voterperks.Config{BotID: "1", Session: func() *discordgo.Session { return nil }, State: state})
	require.NoError(b, err)
	i := &discordgo.InteractionCreate{Interaction: &discordgo.Interaction{
		Type: discordgo.InteractionApplicationCommand, Data: discordgo.ApplicationCommandInteractionData{Name: "premium"},
		Member: &discordgo.Member{User: &discordgo.User{ID: user}},
	}}
	ran := 0
	gate := perks.Gate(func(*discordgo.Session, *discordgo.InteractionCreate) { ran++ }, "premium")
	b.Run("gate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			gate(nil, i)
		}
	})
	b.Run("floor-active", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if poller.Active(user).Active {
				ran++
			}
		}
	})
	require.Positive(b, ran)
}
