package plugin_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// Example puts a one-shard bot on its listing: the server count is posted once
// the shard is ready, the /vote command is published, and a vote reaches the
// reward handler. It runs against the module's fakes of Discord and Top.gg; a
// real bot makes its client with topgg.New(token), its sessions with
// discordgo.New("Bot " + token), and its Config with plugin.LoadEnv.
func Example() {
	discord, err := discordtest.NewServer(discordtest.WithGuilds(
		discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1)))
	if err != nil {
		panic(err)
	}
	defer discord.Close()
	listing, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer listing.Close()
	listing.AddVote(topggtest.Vote{UserID: "800000000000000001", PlatformID: "300000000000000001"})

	client, err := listing.NewClient()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "plugin-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	state, err := boltstate.Open(dir) // the vote cursor, the delivered votes and the commands' hash
	if err != nil {
		panic(err)
	}
	defer state.Close() // after Run returned

	posted := make(chan autopost.Result, 1)
	rewarded := make(chan voterewards.Vote, 1)
	// Every zero field of Config means its default (v1 autopost every 30
	// minutes, command sync on, votes polled every minute); a real bot loads it
	// with plugin.LoadEnv(ctx, &cfg, nil) from its TOPGG_* variables.
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(state),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote for the bot"}}),
		plugin.WithRewardHandler(func(_ context.Context, v voterewards.Vote) error {
			rewarded <- v // a real bot gives a role, idempotently on v.Key()
			return nil
		}),
		plugin.WithOnPost(func(r autopost.Result) {
			select {
			case posted <- r:
			default:
			}
		}),
	)
	if err != nil {
		panic(err)
	}
	session, err := discord.NewSession(0, 1)
	if err != nil {
		panic(err)
	}
	if err := p.Attach(session); err != nil { // before Open, so that READY is seen
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background()) // a real bot: signal.NotifyContext
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }() // until ctx is done
	if err := session.Open(); err != nil {
		panic(err)
	}

	r := <-posted
	fmt.Printf("posted %d servers on %d shard\n", r.Servers, r.Shards)
	v := <-rewarded
	fmt.Printf("rewarded Discord user %s\n", v.PlatformID)

	cmds, ok := listing.Commands()
	for i := 0; !ok && i < 500; i++ { // published on the first READY, beside the post (bounded: 5 s)
		time.Sleep(10 * time.Millisecond)
		cmds, ok = listing.Commands()
	}
	fmt.Printf("published %s\n", cmds)

	stop()
	if err := <-ran; err != nil { // Run returns once the jobs stopped and the vote state is saved
		panic(err)
	}
	_ = session.Close()
	// Output:
	// posted 2 servers on 1 shard
	// rewarded Discord user 300000000000000001
	// published [{"description":"Vote for the bot","name":"vote","type":1}]
}
