// Command pluginbot is a bot built on the plugin alone, in one process:
// autopost, its slash commands, vote rewards and the voter features, its
// state in a directory; no fleet (Redis), no PostgreSQL, no Prometheus, no
// offline demo. It is what a bot that uses none of those pays:
// plugin's TestOneProcessBotLinksNoRedisPostgresOrPrometheus builds it and
// reads its symbols, and scripts/botrss measures its peak memory beside the
// bare bot's (go build -o /tmp/pluginbot ./scripts/pluginbot && go run
// ./scripts/botrss -bot /tmp/pluginbot). It takes the example bot's
// variables: DISCORD_TOKEN, TOPGG_TOKEN, SHARD_COUNT, DISCORD_API_URL,
// TOPGG_API_URL and plugin.Config's TOPGG_* (TOPGG_STATE_DIR).
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	topggOpts := []topgg.Option{}
	if u := os.Getenv("TOPGG_API_URL"); u != "" {
		topggOpts = append(topggOpts, topgg.WithBaseURL(u))
	}
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"), topggOpts...)
	if err != nil {
		return err
	}
	var cfg plugin.Config
	if err := plugin.LoadEnv(ctx, &cfg, nil); err != nil {
		return err
	}
	count := 1
	if n := os.Getenv("SHARD_COUNT"); n != "" {
		if count, err = strconv.Atoi(n); err != nil {
			return err
		}
	}
	shardOpts := []shards.Option{}
	if u := os.Getenv("DISCORD_API_URL"); u != "" {
		shardOpts = append(shardOpts, shards.WithAPIBase(u))
	}
	group, err := shards.New(os.Getenv("DISCORD_TOKEN"), count, shardOpts...)
	if err != nil {
		return err
	}
	app, err := group.Application(ctx)
	if err != nil {
		return err
	}
	p, err := plugin.New(client, cfg,
		plugin.WithCommands(voterperks.Commands(voterperks.Texts{})),
		plugin.WithRewardHandler(func(context.Context, voterewards.Vote) error { return nil }),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: app.ID, Reminders: true}))
	if err != nil {
		return err
	}
	for _, s := range group.Sessions() {
		// It reads nothing of discordgo's State, which would hold every
		// guild (190 MiB more at 100,000 of discordtest's guilds): off, as in the
		// example bot and the bare bot.
		s.StateEnabled = false
		s.AddHandler(p.Perks().Handle)
	}
	if err := p.Attach(group.Sessions()...); err != nil {
		return err
	}
	_ = p.ReadinessChecks() // what a bot serves on its health endpoint
	return group.Serve(ctx, p.Run, shards.Shutdown{})
}
