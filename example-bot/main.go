// Command example-bot is a Discord bot on the Top.gg listing, built on the plugin
// package: it posts its server count, publishes its slash commands, and switches
// on the library's voter features (voterperks): /vote (the user's vote, streak,
// total and points, and reminders opt-in), /leaderboard (this month's top 10), a
// voter role for as long as a vote lasts, and a direct message when a user can
// vote again. Each vote credits the voter with points (its weight) in the bot's
// own table: with DATABASE_URL, in PostgreSQL, in the reward's transaction
// (exactly once); else in TOPGG_STATE_DIR (at least once). With
// TOPGG_WEBHOOK_ADDR it also receives votes by Top.gg's webhooks; the vote
// history is still polled, to reward the votes whose webhook was lost.
//
// It is configured from the environment (see the README); -demo runs it offline
// against in-process fakes of Top.gg and Discord.
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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks for a clean stop; from then on the default handling
	// is back, so that a second one ends the process at once, as in any program.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitConfig = 2
)

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
	if err != nil {
		fmt.Fprintf(stderr, "example-bot: configuration: %v\n", err)
		return exitConfig
	}
	log := cfg.Log.Logger(stderr)
	b, err := newBot(cfg, env, log)
	if _, bad := errors.AsType[*plugin.ConfigError](err); bad {
		fmt.Fprintf(stderr, "example-bot: configuration: %v\n", err)
		return exitConfig
	}
	if err == nil {
		err = b.run(ctx, nil)
	}
	if err != nil {
		log.Error("bot stopped", "error", err)
		return exitFailed
	}
	log.Info("bot stopped")
	return exitOK
}
