// Command pluginonly is a bot built on the plugin alone, in one process:
// autopost, the commands, vote rewards and the voter features, state in a
// directory; no fleet (Redis), no PostgreSQL vote store, no Prometheus.
// TestOneProcessBotLinksNoRedisPostgresOrPrometheus builds it and reads its
// symbols: what a bot does not use, it must not carry (issue 19). It is
// never run.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	var cfg plugin.Config
	if err := plugin.LoadEnv(ctx, &cfg, nil); err != nil {
		log.Fatal(err)
	}
	group, err := shards.New(os.Getenv("DISCORD_TOKEN"), 1)
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()
	p, err := plugin.New(client, cfg,
		plugin.WithCommands(voterperks.Commands(voterperks.Texts{})),
		plugin.WithRewardHandler(func(context.Context, voterewards.Vote) error { return nil }),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: os.Getenv("BOT_ID"), Reminders: true}))
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range group.Sessions() {
		s.AddHandler(p.Perks().Handle)
	}
	if err := p.Attach(group.Sessions()...); err != nil {
		log.Fatal(err)
	}
	if err := group.Open(ctx); err != nil {
		log.Fatal(err)
	}
	_ = p.ReadinessChecks()
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}
