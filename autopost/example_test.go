package autopost_test

import (
	"context"
	"fmt"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// Example keeps a one-shard bot's counts on its listing. It runs against the
// module's fakes of Discord and Top.gg; a real bot makes its client with
// topgg.New(token) and its sessions with discordgo.New("Bot " + token).
func Example() {
	discord, err := discordtest.NewServer(discordtest.WithGuilds(
		discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1), discordtest.GuildIDForShard(2, 0, 1)))
	if err != nil {
		panic(err)
	}
	defer discord.Close()
	topggFake, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer topggFake.Close()

	client, err := topggFake.NewClient()
	if err != nil {
		panic(err)
	}
	posted := make(chan autopost.Result, 1)
	poster, err := autopost.New(client, autopost.Config{
		// Interval, Refresh, ReadyTimeout: the defaults (30 minutes, 3 hours, 5 minutes).
		OnPost: func(r autopost.Result) {
			select {
			case posted <- r:
			default:
			}
		},
	})
	if err != nil {
		panic(err)
	}

	session, err := discord.NewSession(0, 1)
	if err != nil {
		panic(err)
	}
	// Attach before Open, so that READY is seen; Attach refuses an open session.
	detach, err := poster.Attach(session)
	if err != nil {
		panic(err)
	}
	defer detach()

	// Run blocks until its context is done: a bot runs it beside its sessions.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poster.Run(ctx) }()
	if err := session.Open(); err != nil {
		panic(err)
	}

	r := <-posted // the first post goes out once every shard is ready
	fmt.Printf("posted %d servers, %d shard, error: %v\n", r.Servers, r.Shards, r.Err)

	cancel()
	fmt.Println("Run returned:", <-done)
	_ = session.Close()
	// Output:
	// posted 3 servers, 1 shard, error: <nil>
	// Run returned: <nil>
}
