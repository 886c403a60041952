package discordtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// voteBot is the bot under test: /vote looks the user up on Top.gg and gives
// voters a role. The package comment shows it, word for word.
type voteBot struct {
	topgg  *topgg.Client
	roleID string
}

var voteBotCommand = &discordgo.ApplicationCommand{Name: "vote", Description: "Vote for the bot and get the voter role"}

func (b *voteBot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionApplicationCommand || i.Member == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	user, msg := i.Member.User.ID, "Vote for me on Top.gg, then ask again."
	st, err := b.topgg.VoteStatus(ctx, user, topgg.UserIDDiscord)
	if err == nil && st != nil {
		err = s.GuildMemberRoleAdd(i.GuildID, user, b.roleID, discordgo.WithContext(ctx))
		msg = "Thank you for voting: enjoy the voter role."
	}
	if err != nil {
		msg = "Something went wrong; try again later."
	}
	_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: msg},
	}, discordgo.WithContext(ctx))
}

// A bot tested end to end: real discordgo sessions on two shards against the
// fake Discord, a real Top.gg client against the fake Top.gg, and a user who
// types /vote before and after voting.
func Example_bot() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const (
		voter = "300000000000000042"
		role  = "900000000000000777"
	)
	guild := discordtest.GuildIDForShard(0, 1, 2) // on shard 1 of 2
	discord, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guild))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer discord.Close() // runs after the sessions' Close
	project := topggtest.DiscordBot()
	project.PlatformID = discord.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithProject(project))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tg.Close()

	// The bot, as it runs in production, given the fakes' URLs and tokens
	// (tg.NewClient is topgg.New with tg's token, URL and HTTP client).
	client, err := tg.NewClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	group, err := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer group.Close()
	bot := &voteBot{topgg: client, roleID: role}
	for _, s := range group.Sessions() {
		s.ShouldReconnectOnError = false // see Server.NewSession
		s.AddHandler(bot.onInteraction)
	}
	s0 := group.Sessions()[0]
	if _, err := s0.ApplicationCommandBulkOverwrite(discord.ApplicationID(), "", []*discordgo.ApplicationCommand{voteBotCommand},
		discordgo.WithContext(ctx)); err != nil {
		fmt.Println(err)
		return
	}
	if err := group.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}

	vote := func() {
		id, _, err := discord.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: voter})
		if err != nil {
			fmt.Println(err)
			return
		}
		reply, err := discord.WaitInteractionReply(ctx, id)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%q, roles %v\n", reply.Content, discord.MemberRoles(guild, voter))
	}
	vote()
	tg.AddVote(topggtest.Vote{UserID: "100000000000000042", PlatformID: voter})
	vote()
	// Output:
	// "Vote for me on Top.gg, then ask again.", roles []
	// "Thank you for voting: enjoy the voter role.", roles [900000000000000777]
}
