package voterperks_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// A bot that wires voterewards itself (without the plugin): the perks'
// handlers are the poller's, and the poller is the perks' view of the votes.
// A vote gives the voter role; the user opted in to reminders, and gets one
// when the vote expires (here, at once: it expired already). Against the fake
// Discord and the fake Top.gg.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	guild, role, voter := discordtest.GuildIDForShard(0, 0, 1), "900000000000000777", "300000000000000042"
	discord, _ := discordtest.NewServer(discordtest.WithGuilds(guild))
	defer discord.Close()
	tg, _ := topggtest.NewServer()
	defer tg.Close()
	client, _ := tg.NewClient()
	session, _ := discord.NewSession(0, 1) // REST calls need no open session
	dir := tempDir()
	defer os.RemoveAll(dir)
	state, err := boltstate.Open(dir) // the votes and the reminder opt-ins
	if err != nil {
		fmt.Println(err)
		return
	}
	defer state.Close()

	var perks *voterperks.Perks // the handlers call it; it reads the poller
	poller, err := voterewards.New(client, voterewards.Config{
		Store:    state,
		OnReward: func(ctx context.Context, v voterewards.Vote) error { return perks.OnReward(ctx, v) },
		OnExpire: func(ctx context.Context, v voterewards.Vote) error { return perks.OnExpire(ctx, v) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	perks, err = voterperks.New(poller, voterperks.Config{
		BotID:     discord.ApplicationID(),
		Session:   func() *discordgo.Session { return session },
		State:     state,
		Role:      &voterperks.Role{GuildID: guild, RoleID: role},
		Reminders: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = perks.SetReminder(ctx, voter, true) // as /vote remind:True does

	v := voterewards.Vote{Vote: topgg.Vote{UserID: "100000000000000042", PlatformID: voter,
		CreatedAt: time.Now().Add(-11 * time.Hour), ExpiresAt: time.Now().Add(time.Hour)}, Origin: voterewards.OriginHistory}
	_ = perks.OnReward(ctx, v) // what the poller calls for a new vote
	fmt.Println("roles:", discord.MemberRoles(guild, voter))
	v.ExpiresAt = time.Now() // an hour later: the vote expires
	_ = perks.OnExpire(ctx, v)
	_ = perks.OnExpire(ctx, v) // delivered twice: reminded once
	fmt.Println("roles:", discord.MemberRoles(guild, voter))
	dms, _ := discord.WaitDirectMessages(ctx, voter, 1)
	fmt.Println(len(dms), "reminder:", dms[0].Content)
	// Output:
	// roles: [900000000000000777]
	// roles: []
	// 1 reminder: Your Top.gg vote has expired: you can vote again now! https://top.gg/bot/1100000000000000001/vote
	// (To stop these reminders, use /vote remind:False.)
}

// A command for voters only: the gate lets a user with an active vote
// through to the command's handler, and answers anyone else (ephemerally)
// with the vote link. It reads the vote cache only.
func ExamplePerks_Gate() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	discord, _ := discordtest.NewServer(discordtest.WithGuilds(guild))
	defer discord.Close()
	tg, _ := topggtest.NewServer()
	defer tg.Close()
	client, _ := tg.NewClient()
	state := voterewards.NewMemoryStore()
	poller, _ := voterewards.New(client, voterewards.Config{
		Store: state, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	})
	s, _ := discord.NewSession(0, 1)
	perks, err := voterperks.New(poller, voterperks.Config{
		BotID: discord.ApplicationID(), Session: func() *discordgo.Session { return s }, State: state,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	premium := func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Here is your premium content."},
		})
	}
	s.AddHandler(perks.Gate(premium, "premium"))
	cmds := []*discordgo.ApplicationCommand{{Name: "premium", Description: "For voters"}}
	if _, err := s.ApplicationCommandBulkOverwrite(discord.ApplicationID(), "", cmds); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Open(); err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// A webhook vote: the cache knows it at once.
	now := time.Now()
	if err := poller.Ingest(ctx, voterewards.Vote{Vote: topgg.Vote{UserID: "100000000000000001", PlatformID: "300000000000000001",
		Weight: 1, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}, Origin: voterewards.OriginWebhook}); err != nil {
		panic(err)
	}
	for _, user := range []string{"300000000000000001", "300000000000000002"} {
		id, _, err := discord.Interact(ctx, discordtest.InteractionSpec{Command: "premium", GuildID: guild, UserID: user})
		if err != nil {
			fmt.Println(err)
			return
		}
		reply, _ := discord.WaitInteractionReply(ctx, id)
		fmt.Printf("%s (ephemeral: %t)\n", reply.Content, reply.Flags&discordgo.MessageFlagsEphemeral != 0)
	}
	// Output:
	// Here is your premium content. (ephemeral: false)
	// This command is for voters. I am still reading the vote history: if you voted, ask again in a minute; else vote for me on Top.gg: https://top.gg/bot/1100000000000000001/vote (ephemeral: true)
}

// tempDir stands for the bot's state directory.
func tempDir() string {
	dir, _ := os.MkdirTemp("", "voterperks-example-")
	return dir
}
