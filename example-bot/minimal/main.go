// Command minimal is the smallest real bot on the plugin, in one process:
// it posts its server count, publishes its slash commands, rewards votes and
// answers /vote and /leaderboard, its state in TOPGG_STATE_DIR. It reads the
// example bot's variables (plugin.Env). It links neither go-redis nor pgx nor
// Prometheus, which plugin's TestOneProcessBotLinksNoRedisPostgresOrPrometheus
// checks, and scripts/botrss measures its memory beside a bare bot's.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/voterewards"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		log.Fatal(err)
	}
}

// readme:begin plugin
func run(ctx context.Context) error {
	var env plugin.Env // DISCORD_TOKEN, TOPGG_TOKEN, SHARD_COUNT, TOPGG_STATE_DIR, TOPGG_*, ...
	if err := plugin.LoadEnv(ctx, &env, nil); err != nil {
		return err // names the variable: "TOPGG_TOKEN: is required but not set"
	}
	client, err := env.Client()
	if err != nil {
		return err
	}
	group, err := env.Shards() // one discordgo session per shard
	if err != nil {
		return err
	}
	state, err := boltstate.Open(env.StateDir) // votes, ledger, command hash, reminder opt-ins
	if err != nil {
		return err
	}
	defer state.Close() // after Run returned
	app, err := group.Application(ctx)
	if err != nil {
		return err
	}
	p, err := plugin.New(client, env.Config, plugin.WithState(state),
		plugin.WithCommands([]*discordgo.ApplicationCommand{}), // the bot's own, beside /vote and /leaderboard
		plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
			log.Printf("%s voted", v.PlatformID) // idempotent on v.Key(): at least once
			return nil
		}),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: app.ID, Reminders: true}))
	if err != nil {
		return err
	}
	for _, s := range group.Sessions() {
		s.StateEnabled = false // nothing here reads discordgo's State, which holds every guild
	}
	if err := p.Attach(group.Sessions()...); err != nil { // before the sessions open
		return err
	}
	if err := p.RegisterCommands(ctx, app.ID); err != nil { // on Discord, as on Top.gg
		return err
	}
	return group.Serve(ctx, p.Run, shards.Shutdown{}) // until SIGTERM: the jobs stop, then the shards
}

// readme:end
