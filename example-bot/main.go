// Command example-bot is a Discord bot on the Top.gg listing, built on the
// plugin package with every feature on: it posts its server count, publishes
// its slash commands, rewards votes (found by polling and by webhooks) with a
// voter role and points, answers /vote and /leaderboard, and reminds voters.
// A vote's points (its weight) go to the bot's own table: with DATABASE_URL in
// PostgreSQL, in the reward's transaction (exactly once), else in
// TOPGG_STATE_DIR (at least once). It reads the environment (see the README);
// -demo runs it offline against in-process fakes of Top.gg and Discord.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

const exitOK, exitFailed, exitConfig = 0, 1, 2 // exit codes

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal the default handling is back: a second one ends the process at once.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr))
}

// run is the whole program, apart from the process: it returns the exit code.
func run(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("example-bot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "run offline against in-process fakes of Top.gg and Discord, and narrate")
	if err := fs.Parse(args); err != nil {
		return exitConfig
	}
	if *demo {
		if err := runDemo(ctx, stdout); err != nil {
			fmt.Fprintf(stderr, "example-bot: demo failed: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	cfg, err := loadConfig(ctx, env)
	log := cfg.Logger(stderr)
	var b *bot
	if err == nil {
		b, err = newBot(cfg, log)
	}
	if _, bad := errors.AsType[*topgg.ConfigError](err); bad {
		fmt.Fprintf(stderr, "example-bot: configuration: %v\n", err)
		return exitConfig
	}
	if err == nil {
		err = b.run(ctx)
	}
	if err != nil {
		log.Error("bot stopped", "error", err)
		return exitFailed
	}
	log.Info("bot stopped")
	return exitOK
}

// config is the bot's whole configuration, read from the environment: the
// deployment (plugin.Env: tokens, shards, state, fleet, the plugin's
// settings) and the bot's own variables. Its secrets print as [redacted].
type config struct {
	plugin.Env
	RewardGuildID plugin.Snowflake `env:"REWARD_GUILD_ID"`
	RewardRoleID  plugin.Snowflake `env:"REWARD_ROLE_ID"`
	MetricsAddr   string           `env:"METRICS_ADDR"` // the ops server's (bot.go)
}

// loadConfig reads and checks the configuration, touching neither the
// network nor the disk; errors name the variable.
func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := plugin.LoadEnv(ctx, &c, l); err != nil {
		return config{}, err
	}
	if (c.RewardGuildID == "") != (c.RewardRoleID == "") {
		return config{}, &topgg.ConfigError{Variable: "REWARD_ROLE_ID", Problem: "REWARD_GUILD_ID and REWARD_ROLE_ID must be set together"}
	}
	if err := plugin.CheckAddr(c.MetricsAddr); err != nil {
		return config{}, &topgg.ConfigError{Variable: "METRICS_ADDR", Err: err}
	}
	return c, nil
}
