package shards_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/shards"
)

// A bot's shards, opened under the process's signal context and closed at
// the end; here against the fake Discord of discordtest instead of Discord.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	guild := discordtest.GuildIDForShard(0, 1, 2)
	discord, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guild))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer discord.Close()

	// In a bot: shards.New(os.Getenv("DISCORD_TOKEN"), shardCount).
	group, err := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer group.Close() // closes every shard at once
	for _, s := range group.Sessions() {
		s.StateEnabled = false           // the bot reads nothing of discordgo's cache
		s.ShouldReconnectOnError = false // see Group.Close
	}
	// A SIGTERM (or the timeout) while Discord is slow or silent ends Open at once.
	if err := group.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// REST calls given the context end with it, rate-limit waits included.
	s, err := group.ForGuild(guild)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.GuildMemberRoleAdd(guild, "300000000000000042", "900000000000000777", discordgo.WithContext(ctx))
	fmt.Println("shard", s.ShardID, "role given:", err == nil)
	// Output:
	// shard 1 role given: true
}

// A bot's main loop: the shards open while a job runs beside them (in a bot,
// a plugin's Run, attached to the sessions first); on SIGTERM the job stops
// first, then the shards close, within the budget.
func ExampleGroup_Serve() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	discord, err := discordtest.NewServer(discordtest.WithShardCount(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer discord.Close()
	group, err := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
	if err != nil {
		fmt.Println(err)
		return
	}
	app, err := group.Application(ctx) // its ID registers the slash commands
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a bot: ctx is signal.NotifyContext's, and the job is plugin.Run.
	serveCtx, stop := context.WithCancel(ctx)
	job := func(ctx context.Context) error {
		stop() // here: stop at once, as a SIGTERM would
		<-ctx.Done()
		fmt.Println("job stopped while the shards were open")
		return nil
	}
	err = group.Serve(serveCtx, job, shards.Shutdown{JobsFirst: 5 * time.Second, Budget: 8 * time.Second})
	fmt.Println("application", app.ID == discord.BotUserID(), "served:", err)
	// Output:
	// job stopped while the shards were open
	// application true served: <nil>
}
