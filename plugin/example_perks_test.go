package plugin_test

import (
	"context"
	"log"
	"os"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterperks"
)

// A bot whose voters get a role while their vote is active, a reminder when
// they can vote again (if they ask with /vote remind:True), /vote and
// /leaderboard, and a /premium command for voters only. (Not run: it needs
// Discord and Top.gg; voterperks's Examples run against the fakes.)
func ExampleWithVoterPerks() {
	const botID, guildID, roleID = "123456789012345678", "223456789012345678", "323456789012345678"
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	group, err := shards.New(os.Getenv("DISCORD_TOKEN"), 1)
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close() // after Run returned
	// The votes, the command hash and the reminder opt-ins.
	state, err := boltstate.Open("topgg-state")
	if err != nil {
		log.Fatal(err)
	}
	defer state.Close() // after Run returned
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(state),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "premium", Description: "For voters only"}}),
		plugin.WithVoterPerks(plugin.VoterPerks{
			BotID: botID, Role: &voterperks.Role{GuildID: guildID, RoleID: roleID}, Reminders: true,
		}))
	if err != nil {
		log.Fatal(err)
	}
	premium := func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Thank you for voting: here it is."},
		})
	}
	for _, s := range group.Sessions() {
		s.AddHandler(p.Perks().Gate(premium, "premium"))
	}
	// Attach adds the /vote and /leaderboard handler.
	if err := p.Attach(group.Sessions()...); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// /premium, /vote and /leaderboard on Discord, as the listing gets them.
	if err := p.RegisterCommands(ctx, botID); err != nil {
		log.Fatal(err)
	}
	if err := group.Open(ctx); err != nil {
		log.Fatal(err)
	}
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}
